#!/usr/bin/env bash
# Run 35: the pipelined k-skip, the MMA turn order, against f571b69 (the sweep's binary) in the
# same call; the gemm walk at B <= 64; ncu of the filter pass at 1,024; the filter tests.
set -u
mkdir -p /tmp/pp /tmp/old && tar xzf .carry/portable.tgz -C /tmp/pp && tar xzf .carry/old-f571b69.tgz -C /tmp/old
P=/tmp/pp/portable; . $P/gpu_env.sh
O=/tmp/o35; mkdir -p $O
save() { tar czf $OUT/o35.tgz -C /tmp o35; }
run() { # name, binary, env..., filter
  local name=$1 bin=$2; shift 2; local filter=${!#}; local envs=("${@:1:$#-1}")
  env "${envs[@]}" LD_LIBRARY_PATH=$(dirname $bin):${LD_LIBRARY_PATH:-} timeout 60 $bin --benchmark_filter="$filter" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$O/$name.json --benchmark_out_format=json > $O/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "median|rror" $O/$name.txt | awk '{print $1, $2, $3}' | head -8
}
OLD=/tmp/old/portable/distancies-bench NEW=$P/distancies-bench
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
T=$P/test_batch
timeout 150 $T --gtest_filter='*ilter*:*Gemm*:*Seeded*:*Ties*:*Uncertif*' > $O/test_filter.log 2>&1; echo "rc=$?" >> $O/test_filter.log
echo "== tests"; tail -3 $O/test_filter.log
DISTANCIES_FILTER_WALK=gemm timeout 90 $T --gtest_filter='Registry/*batch_f16_filter*:*Seeded*:*Ties*:*Overflow*' > $O/test_filter_gemm.log 2>&1; echo "rc=$?" >> $O/test_filter_gemm.log
echo "== tests forced gemm"; tail -3 $O/test_filter_gemm.log; save
N=/usr/local/cuda/bin/ncu
timeout 120 $N --clock-control none --kernel-name regex:wgmma_filter --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats --import-source no -o $O/filter1024 -f \
  $NEW --benchmark_filter='^batch/batch_f16_filter/batch:1024/' --benchmark_min_time=0.01 > $O/ncu.txt 2>&1
echo "ncu rc=$?"; tail -1 $O/ncu.txt
$N --import $O/filter1024.ncu-rep --page details > $O/details.txt 2>&1
$N --import $O/filter1024.ncu-rep --page source --csv --print-source sass > $O/sass.csv 2>$O/sass.err; echo "sass rc=$? $(wc -l < $O/sass.csv)"
rm -f $O/filter1024.ncu-rep; save
grep -E "Duration|Compute \(SM\) Throughput|Issued Warp|Warp Cycles Per Issued" $O/details.txt | head -6
