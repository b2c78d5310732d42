#!/usr/bin/env bash
# Run 39 (010f03b): the peers at B = 1024 and our batch pipelines at B = 1024, one call.
. scripts/device_ab.sh o39 .carry/slim.tgz
peers '^batch(_auto)?/(batch_f16_filter/|batch_f16_h/|batch_tf32/)?batch:1024/'
for r in 24 16; do
  DISTANCIES_GEMM_REFINE=$r timeout 60 $NEW --benchmark_filter='^batch/batch_f16_filter/batch:(200|256|300)/' --benchmark_repetitions=30 \
    --benchmark_report_aggregates_only=true > $O/stress-refine$r.txt 2>&1
  echo "stress refine $r rc=$?"; grep -E "median|rror" $O/stress-refine$r.txt | awk '{print $1, $2, $3}'; grep -o "fallbacks=[0-9.e+-]*" $O/stress-refine$r.txt | sort | uniq -c
done
save
