#!/usr/bin/env bash
# Run 40 (a6733b8): the filter pass in two parts (split 2, 4, 8; 1 = one pass) against 010f03b in
# the same call; the filter tests (split 4 and 2, forced gemm); synccheck / racecheck at B = 130.
# (Rewritten onto scripts/device_ab.sh after the run: the same commands.)
. scripts/device_ab.sh o40 .carry/portable.tgz .carry/old-010f03b.tgz
L='^batch/batch_f16_filter/batch:(32|128|256|512|1024)/'
run old1 $OLD X=1 "$L"
run split4 $NEW X=1 "$L"
run split1 $NEW DISTANCIES_GEMM_SPLIT=1 "$L"
run split2 $NEW DISTANCIES_GEMM_SPLIT=2 "$L"
run split8 $NEW DISTANCIES_GEMM_SPLIT=8 "$L"
run old2 $OLD X=1 "$L"
run split4b $NEW X=1 "$L"
save
gtest test_filter 150 "$FILTER_TESTS"
gtest test_split2 90 '*GemmWalk*:*Seeded*' DISTANCIES_GEMM_SPLIT=2
gtest test_filter_gemm 45 'Registry/*batch_f16_filter*:*Overflow*' DISTANCIES_FILTER_WALK=gemm
for spec in "memcheck:BatchSearch.SeededThresholdsKeepEveryAnswer" "synccheck:BatchSearch.SeededThresholdsKeepEveryAnswer" "racecheck:Registry/BatchPipelineTest.*/batch_f16_filter_b130_small_tiles"; do
  tool=${spec%%:*} F=${spec#*:}
  timeout 80 compute-sanitizer --tool $tool $P/test_batch --gtest_filter="$F" > $O/$tool.log 2>&1; echo "rc=$?" >> $O/$tool.log
  echo "== $tool $F"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|rc=" $O/$tool.log | head -4; save
done
