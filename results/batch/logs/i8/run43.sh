#!/usr/bin/env bash
# Run 43: where batch_i8_filter's 3.08 ms at B = 1,024 go: every kernel's time in one search
# (ncu), the int8 filter pass's stalls by SASS line, and the refine stride (8, 16, 64 against 32).
. scripts/device_ab.sh run43 .carry/portable.tgz
N=/usr/local/cuda/bin/ncu
F='^batch/batch_i8_filter/batch:1024/'
timeout 150 $N --clock-control none --launch-skip 40 --launch-count 14 --metrics gpu__time_duration.sum \
  $NEW --benchmark_filter="$F" --benchmark_min_time=0.01 > $O/kernels.txt 2>&1; echo "kernels rc=$?"
grep -E "^  [a-zA-Z_].*\(|gpu__time_duration" $O/kernels.txt | sed 's/(int, .*//' | cut -c1-110 | paste - - | awk '{print $1, $(NF)}' | head -28
ncu_walk i8 "$F"
for r in 8 16 64; do run refine$r $NEW DISTANCIES_GEMM_REFINE=$r "$F"; done
save
