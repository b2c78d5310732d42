#!/usr/bin/env bash
# Run 41 (HEAD): 192-query blocks with three consumer warpgroups against 256 with two, and the
# sweep's binary (010f03b); the filter tests with 192; synccheck / racecheck with 192.
# (Rewritten onto scripts/device_ab.sh after the run: the same commands.)
. scripts/device_ab.sh o41 .carry/portable.tgz .carry/old-010f03b.tgz
L='^batch/batch_f16_filter/batch:(256|512|1024|2048)/'
run old1 $OLD X=1 "$L"
run q256 $NEW X=1 "$L"
run q192 $NEW DISTANCIES_GEMM_QUERIES=192 "$L"
run old2 $OLD X=1 "$L"
run q192b $NEW DISTANCIES_GEMM_QUERIES=192 "$L"
run q192-noorder $NEW DISTANCIES_GEMM_QUERIES=192 DISTANCIES_GEMM_ORDER=0 '^batch/batch_f16_filter/batch:(1024)/'
save
gtest test_filter_q192 150 "$FILTER_TESTS" DISTANCIES_GEMM_QUERIES=192
for spec in "synccheck:Registry/BatchPipelineTest.*/batch_f16_filter_b200_k64" "racecheck:Registry/BatchPipelineTest.*/batch_f16_filter_b130_small_tiles" "memcheck:BatchSearch.SeededThresholdsKeepEveryAnswer"; do
  tool=${spec%%:*} F=${spec#*:}
  DISTANCIES_GEMM_QUERIES=192 timeout 80 compute-sanitizer --tool $tool $P/test_batch --gtest_filter="$F" > $O/$tool-q192.log 2>&1; echo "rc=$?" >> $O/$tool-q192.log
  echo "== $tool $F"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|rc=" $O/$tool-q192.log | head -4; save
done
