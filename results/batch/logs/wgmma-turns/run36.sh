#!/usr/bin/env bash
# Run 36: the vote epilogue + MMA turns (default) against ba55aeb with the turns, same call; the
# filter tests; refine strides at 1,024 (24: the failure hunt); synccheck / racecheck.
# (Rewritten onto scripts/device_ab.sh after the run: the same commands.)
. scripts/device_ab.sh o36 .carry/portable.tgz .carry/order-ba55aeb.tgz
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
gtest test_filter 170 "$FILTER_TESTS"
gtest test_filter_gemm 60 'Registry/*batch_f16_filter*:*Overflow*:*OnlyWhere*' DISTANCIES_FILTER_WALK=gemm
F='Registry/BatchPipelineTest.*/batch_f16_filter_b130_small_tiles'
for tool in synccheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool $P/test_batch --gtest_filter="$F" > $O/$tool.log 2>&1; echo "rc=$?" >> $O/$tool.log
  echo "== $tool"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|rc=" $O/$tool.log | head -4; save
done
