#!/usr/bin/env bash
# Run 54: racecheck over the int8 walk (B = 37 and the 64-query block) and the copy's test.
. scripts/device_ab.sh run54 .carry/portable.tgz
timeout 500 /usr/local/cuda/bin/compute-sanitizer --tool racecheck $T --gtest_filter='*i8_filter_b37_d300*:*TiledI8*' > $O/racecheck.log 2>&1
echo "racecheck rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED|hazard" $O/racecheck.log | head -6
save
