#!/usr/bin/env bash
# Run 53: auto with the table regenerated from run 50's sweep, beside batch_i8_filter, at every
# B of the sweep (results/batch/h100-batch-auto-check.json).
. scripts/device_ab.sh run53 .carry/portable.tgz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.csv
timeout 500 $NEW --benchmark_filter='^batch(_auto)?/(batch_i8_filter/)?batch:(1|2|4|8|16|32|64|128|256|512|1024|2048|4096|8192)/' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out=$O/auto-check.json --benchmark_out_format=json > $O/auto-check.console.txt 2>&1; echo "rc=$?"
grep -E "median" $O/auto-check.console.txt | awk '{print $1, $2}' | head -30
save
