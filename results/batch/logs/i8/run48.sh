#!/usr/bin/env bash
# Run 48: the int8 walk with its tile's bounds loaded before the MMAs but used after them, and the
# candidates' sorted rows mapped to the model's by the select (K a query) instead of a load a
# candidate in the walk: the filter tests, batch:16 / 128 / 1024 of both filters, and every
# kernel's time in one int8 search at 1,024 (ncu, raw CSV).
. scripts/device_ab.sh run48 .carry/portable.tgz
gtest filter 500 "$FILTER_TESTS:*i8*:*I8*:*Overflow*:*TooLong*:*f16_filter*"
run b1024 $NEW '^batch/(batch_f16_filter|batch_i8_filter)/batch:(16|128|1024)/'
N=/usr/local/cuda/bin/ncu
timeout 150 $N --clock-control none --kernel-name regex:'filter|seed|select|rerank|normalize|tiled_i8|inverse' \
  --launch-skip 40 --launch-count 16 --metrics gpu__time_duration.sum --csv --page raw \
  $NEW --benchmark_filter='^batch/batch_i8_filter/batch:1024/' --benchmark_min_time=0.01 > $O/kernels.csv 2>$O/kernels.err
echo "kernels rc=$?"
python3 - $O/kernels.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
h = rows[0]; k = h.index("Kernel Name"); t = h.index("gpu__time_duration.sum")
for r in rows[2:]:
    print(f"{r[t]:>12} {r[k].split('(')[0].split('<')[0][:60]}")
PY
save
