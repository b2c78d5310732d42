#!/usr/bin/env bash
# Run 34 (84e4ab6): the skipped MMA steps (A/B), 128-query blocks at B = 1024, the gemm walk at
# B <= 64 (forced), the filter tests (default and forced gemm), the stride-24 failure hunt, ncu.
# (Rewritten onto scripts/device_ab.sh after the run: the same commands.)
. scripts/device_ab.sh o34 .carry/portable.tgz
B=$NEW
L='^batch/batch_f16_filter/batch:(128|256|1024)/'
run skipk $NEW X=1 "$L"
run fullk $NEW DISTANCIES_GEMM_FULL_K=1 "$L"
run q128 $NEW DISTANCIES_GEMM_QUERIES=128 '^batch/batch_f16_filter/batch:1024/'
run skipk2 $NEW X=1 "$L"
S='^batch/batch_f16_filter/batch:(1|4|16|32|64)/'
run small-default $NEW X=1 "$S"
run small-gemm $NEW DISTANCIES_FILTER_WALK=gemm "$S"
save
gtest test_filter 150 "$FILTER_TESTS"
gtest test_filter_gemm 90 'Registry/*batch_f16_filter*:*Seeded*:*Ties*:*Overflow*' DISTANCIES_FILTER_WALK=gemm
for i in 1 2 3; do
  DISTANCIES_GEMM_REFINE=24 timeout 40 $B --benchmark_filter='^batch/batch_f16_filter/batch:256/' --benchmark_repetitions=10 \
    --benchmark_report_aggregates_only=true > $O/refine24-$i.txt 2>&1
  echo "== refine24 #$i rc=$?"; grep -E "median|rror" $O/refine24-$i.txt | cut -c1-200 | head -3; grep -o "fallbacks=[0-9.e+-]*" $O/refine24-$i.txt | sort | uniq -c
done
save
N=/usr/local/cuda/bin/ncu
timeout 150 $N --clock-control none --kernel-name regex:wgmma_filter --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
  --section SourceCounters --section SchedulerStats --import-source no -o $O/filter1024 -f \
  $B --benchmark_filter='^batch/batch_f16_filter/batch:1024/' --benchmark_min_time=0.01 > $O/ncu.txt 2>&1
echo "ncu rc=$?"; tail -2 $O/ncu.txt
$N --import $O/filter1024.ncu-rep --page details > $O/details.txt 2>&1
$N --import $O/filter1024.ncu-rep --page source --csv --print-source sass > $O/sass.csv 2>$O/sass.err; echo "sass rc=$? $(wc -l < $O/sass.csv)"
rm -f $O/filter1024.ncu-rep; save
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|L2 Cache Throughput|Issued Warp|Warp Cycles Per Issued" $O/details.txt | head -10
