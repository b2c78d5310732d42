#!/usr/bin/env bash
# Run 40 (a6733b8): the filter pass in two parts (split 2, 4, 8; 1 = one pass) against 010f03b in
# the same call; the filter tests (split 4 and 2, forced gemm); synccheck / racecheck at B = 130.
set -u
mkdir -p /tmp/pp /tmp/old && tar xzf .carry/portable.tgz -C /tmp/pp && tar xzf .carry/old-010f03b.tgz -C /tmp/old
P=/tmp/pp/portable; . $P/gpu_env.sh
O=/tmp/o40; mkdir -p $O
save() { tar czf $OUT/o40.tgz -C /tmp o40; }
run() { # name, binary, env..., filter
  local name=$1 bin=$2; shift 2; local filter=${!#}; local envs=("${@:1:$#-1}")
  env "${envs[@]}" LD_LIBRARY_PATH=$(dirname $bin):${LD_LIBRARY_PATH:-} timeout 60 $bin --benchmark_filter="$filter" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$O/$name.json --benchmark_out_format=json > $O/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "median|rror" $O/$name.txt | awk '{print $1, $2, $3}' | head -8; grep -o "fallbacks=[0-9.e+-]*" $O/$name.txt | sort | uniq -c | tr '\n' ' '; echo
}
OLD=/tmp/old/portable/distancies-bench NEW=$P/distancies-bench
L='^batch/batch_f16_filter/batch:(32|128|256|512|1024)/'
run old1 $OLD X=1 "$L"
run split4 $NEW X=1 "$L"
run split1 $NEW DISTANCIES_GEMM_SPLIT=1 "$L"
run split2 $NEW DISTANCIES_GEMM_SPLIT=2 "$L"
run split8 $NEW DISTANCIES_GEMM_SPLIT=8 "$L"
run old2 $OLD X=1 "$L"
run split4b $NEW X=1 "$L"
save
T=$P/test_batch
timeout 150 $T --gtest_filter='*ilter*:*Gemm*:*Seeded*:*Ties*:*Uncertif*' > $O/test_filter.log 2>&1; echo "rc=$?" >> $O/test_filter.log
echo "== tests"; grep -E "FAILED|PASSED|rc=" $O/test_filter.log | head; save
DISTANCIES_GEMM_SPLIT=2 timeout 90 $T --gtest_filter='*GemmWalk*:*Seeded*' > $O/test_split2.log 2>&1; echo "rc=$?" >> $O/test_split2.log
echo "== tests split 2"; grep -E "FAILED|PASSED|rc=" $O/test_split2.log | head; save
DISTANCIES_FILTER_WALK=gemm timeout 45 $T --gtest_filter='Registry/*batch_f16_filter*:*Overflow*' > $O/test_filter_gemm.log 2>&1; echo "rc=$?" >> $O/test_filter_gemm.log
echo "== tests forced gemm"; grep -E "FAILED|PASSED|rc=" $O/test_filter_gemm.log | head; save
for spec in "memcheck:BatchSearch.SeededThresholdsKeepEveryAnswer" "synccheck:BatchSearch.SeededThresholdsKeepEveryAnswer" "racecheck:Registry/BatchPipelineTest.*/batch_f16_filter_b130_small_tiles"; do
  tool=${spec%%:*} F=${spec#*:}
  timeout 80 compute-sanitizer --tool $tool $P/test_batch --gtest_filter="$F" > $O/$tool.log 2>&1; echo "rc=$?" >> $O/$tool.log
  echo "== $tool $F"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|rc=" $O/$tool.log | head -4; save
done
