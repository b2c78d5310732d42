#!/usr/bin/env bash
# Run 41 (HEAD): 192-query blocks with three consumer warpgroups against 256 with two, and the
# sweep's binary (010f03b); the filter tests with 192; synccheck / racecheck with 192.
set -u
mkdir -p /tmp/pp /tmp/old && tar xzf .carry/portable.tgz -C /tmp/pp && tar xzf .carry/old-010f03b.tgz -C /tmp/old
P=/tmp/pp/portable; . $P/gpu_env.sh
O=/tmp/o41; mkdir -p $O
save() { tar czf $OUT/o41.tgz -C /tmp o41; }
run() { # name, binary, env..., filter
  local name=$1 bin=$2; shift 2; local filter=${!#}; local envs=("${@:1:$#-1}")
  env "${envs[@]}" LD_LIBRARY_PATH=$(dirname $bin):${LD_LIBRARY_PATH:-} timeout 60 $bin --benchmark_filter="$filter" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$O/$name.json --benchmark_out_format=json > $O/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "median|rror" $O/$name.txt | awk '{print $1, $2, $3}' | head -8; grep -o "fallbacks=[0-9.e+-]*" $O/$name.txt | sort | uniq -c | tr '\n' ' '; echo
}
OLD=/tmp/old/portable/distancies-bench NEW=$P/distancies-bench
L='^batch/batch_f16_filter/batch:(256|512|1024|2048)/'
run old1 $OLD X=1 "$L"
run q256 $NEW X=1 "$L"
run q192 $NEW DISTANCIES_GEMM_QUERIES=192 "$L"
run old2 $OLD X=1 "$L"
run q192b $NEW DISTANCIES_GEMM_QUERIES=192 "$L"
run q192-noorder $NEW DISTANCIES_GEMM_QUERIES=192 DISTANCIES_GEMM_ORDER=0 '^batch/batch_f16_filter/batch:(1024)/'
save
T=$P/test_batch
DISTANCIES_GEMM_QUERIES=192 timeout 150 $T --gtest_filter='*ilter*:*Gemm*:*Seeded*:*Ties*:*Uncertif*' > $O/test_filter_q192.log 2>&1; echo "rc=$?" >> $O/test_filter_q192.log
echo "== tests q192"; grep -E "FAILED|PASSED|rc=" $O/test_filter_q192.log | head; save
for spec in "synccheck:Registry/BatchPipelineTest.*/batch_f16_filter_b200_k64" "racecheck:Registry/BatchPipelineTest.*/batch_f16_filter_b130_small_tiles" "memcheck:BatchSearch.SeededThresholdsKeepEveryAnswer"; do
  tool=${spec%%:*} F=${spec#*:}
  DISTANCIES_GEMM_QUERIES=192 timeout 80 compute-sanitizer --tool $tool $P/test_batch --gtest_filter="$F" > $O/$tool-q192.log 2>&1; echo "rc=$?" >> $O/$tool-q192.log
  echo "== $tool $F"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|rc=" $O/$tool-q192.log | head -4; save
done
