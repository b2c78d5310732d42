#!/usr/bin/env bash
# Run 36: the vote epilogue + MMA turns (default) against ba55aeb with the turns, same call; the
# filter tests; refine strides at 1,024 (24: the failure hunt); synccheck / racecheck.
set -u
mkdir -p /tmp/pp /tmp/old && tar xzf .carry/portable.tgz -C /tmp/pp && tar xzf .carry/order-ba55aeb.tgz -C /tmp/old
P=/tmp/pp/portable; . $P/gpu_env.sh
O=/tmp/o36; mkdir -p $O
save() { tar czf $OUT/o36.tgz -C /tmp o36; }
run() { # name, binary, env..., filter
  local name=$1 bin=$2; shift 2; local filter=${!#}; local envs=("${@:1:$#-1}")
  env "${envs[@]}" LD_LIBRARY_PATH=$(dirname $bin):${LD_LIBRARY_PATH:-} timeout 60 $bin --benchmark_filter="$filter" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$O/$name.json --benchmark_out_format=json > $O/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "median|rror" $O/$name.txt | awk '{print $1, $2, $3}' | head -8
}
OLD=/tmp/old/portable/distancies-bench NEW=$P/distancies-bench
L='^batch/batch_f16_filter/batch:(128|256|1024)/'
run order1 $OLD DISTANCIES_GEMM_ORDER=1 "$L"
run vote1 $NEW X=1 "$L"
run order2 $OLD DISTANCIES_GEMM_ORDER=1 "$L"
run vote2 $NEW X=1 "$L"
run vote-noorder $NEW DISTANCIES_GEMM_ORDER=0 "$L"
run small $NEW X=1 '^batch/batch_f16_filter/batch:(1|4|16|32|64)/'
save
for r in 16 24 48; do run refine$r $NEW DISTANCIES_GEMM_REFINE=$r '^batch/batch_f16_filter/batch:(256|1024)/'; done
save
T=$P/test_batch
timeout 170 $T --gtest_filter='*ilter*:*Gemm*:*Seeded*:*Ties*:*Uncertif*' > $O/test_filter.log 2>&1; echo "rc=$?" >> $O/test_filter.log
echo "== tests"; grep -E "FAILED|PASSED|rc=" $O/test_filter.log | head; save
DISTANCIES_FILTER_WALK=gemm timeout 60 $T --gtest_filter='Registry/*batch_f16_filter*:*Overflow*:*OnlyWhere*' > $O/test_filter_gemm.log 2>&1; echo "rc=$?" >> $O/test_filter_gemm.log
echo "== tests forced gemm"; grep -E "FAILED|PASSED|rc=" $O/test_filter_gemm.log | head; save
F='Registry/BatchPipelineTest.*/batch_f16_filter_b130_small_tiles'
for tool in synccheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool $P/test_batch --gtest_filter="$F" > $O/$tool.log 2>&1; echo "rc=$?" >> $O/$tool.log
  echo "== $tool"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|rc=" $O/$tool.log | head -4; save
done
