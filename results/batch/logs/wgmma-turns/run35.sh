#!/usr/bin/env bash
# Run 35: the pipelined k-skip, the MMA turn order, against f571b69 (the sweep's binary) in the
# same call; the gemm walk at B <= 64; ncu of the filter pass at 1,024; the filter tests.
# (Rewritten onto scripts/device_ab.sh after the run: the same commands.)
. scripts/device_ab.sh o35 .carry/portable.tgz .carry/old-f571b69.tgz
L='^batch/batch_f16_filter/batch:(128|256|1024)/'
run old1 $OLD X=1 "$L"
run new1 $NEW X=1 "$L"
run fullk $NEW DISTANCIES_GEMM_FULL_K=1 "$L"
run order $NEW DISTANCIES_GEMM_ORDER=1 "$L"
run old2 $OLD X=1 "$L"
run new2 $NEW X=1 "$L"
run order2 $NEW DISTANCIES_GEMM_ORDER=1 "$L"
save
S='^batch/batch_f16_filter/batch:(1|4|16|32|64)/'
run small-default $NEW X=1 "$S"
run small-gemm $NEW DISTANCIES_FILTER_WALK=gemm "$S"
save
gtest test_filter 150 "$FILTER_TESTS"
gtest test_filter_gemm 90 'Registry/*batch_f16_filter*:*Seeded*:*Ties*:*Overflow*' DISTANCIES_FILTER_WALK=gemm
N=/usr/local/cuda/bin/ncu
timeout 120 $N --clock-control none --kernel-name regex:wgmma_filter --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats --import-source no -o $O/filter1024 -f \
  $NEW --benchmark_filter='^batch/batch_f16_filter/batch:1024/' --benchmark_min_time=0.01 > $O/ncu.txt 2>&1
echo "ncu rc=$?"; tail -1 $O/ncu.txt
$N --import $O/filter1024.ncu-rep --page details > $O/details.txt 2>&1
$N --import $O/filter1024.ncu-rep --page source --csv --print-source sass > $O/sass.csv 2>$O/sass.err; echo "sass rc=$? $(wc -l < $O/sass.csv)"
rm -f $O/filter1024.ncu-rep; save
grep -E "Duration|Compute \(SM\) Throughput|Issued Warp|Warp Cycles Per Issued" $O/details.txt | head -6
