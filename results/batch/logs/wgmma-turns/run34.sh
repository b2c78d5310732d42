#!/usr/bin/env bash
# Run 34 (84e4ab6): the skipped MMA steps (A/B), 128-query blocks at B = 1024, the gemm walk at
# B <= 64 (forced), the filter tests (default and forced gemm), the stride-24 failure hunt, ncu.
set -u
mkdir -p /tmp/pp && tar xzf .carry/portable.tgz -C /tmp/pp
P=/tmp/pp/portable; . $P/gpu_env.sh
O=/tmp/o34; mkdir -p $O
save() { tar czf $OUT/o34.tgz -C /tmp o34; }
B=$P/distancies-bench
run() { # name, env..., filter
  local name=$1; shift; local filter=${!#}; local envs=("${@:1:$#-1}")
  env "${envs[@]}" timeout 60 $B --benchmark_filter="$filter" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$O/$name.json --benchmark_out_format=json > $O/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "median|rror" $O/$name.txt | awk '{print $1, $2, $3}' | head -8
}
L='^batch/batch_f16_filter/batch:(128|256|1024)/'
run skipk X=1 "$L"
run fullk DISTANCIES_GEMM_FULL_K=1 "$L"
run q128 DISTANCIES_GEMM_QUERIES=128 '^batch/batch_f16_filter/batch:1024/'
run skipk2 X=1 "$L"
S='^batch/batch_f16_filter/batch:(1|4|16|32|64)/'
run small-default X=1 "$S"
run small-gemm DISTANCIES_FILTER_WALK=gemm "$S"
save
T=$P/test_batch
timeout 150 $T --gtest_filter='*ilter*:*Gemm*:*Seeded*:*Ties*:*Uncertif*' > $O/test_filter.log 2>&1; echo "rc=$?" >> $O/test_filter.log
echo "== tests"; tail -3 $O/test_filter.log
DISTANCIES_FILTER_WALK=gemm timeout 90 $T --gtest_filter='Registry/*batch_f16_filter*:*Seeded*:*Ties*:*Overflow*' > $O/test_filter_gemm.log 2>&1; echo "rc=$?" >> $O/test_filter_gemm.log
echo "== tests forced gemm"; tail -3 $O/test_filter_gemm.log; save
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
