#!/usr/bin/env bash
# Run 57: after the review's clean-up of filter_scan_tiles (one capacity rule, the int8 branch
# restructured): test_batch whole and both filters at B = 16 / 128 / 1,024.
. scripts/device_ab.sh run57 .carry/portable.tgz
timeout 250 $T > $O/test_batch.log 2>&1; echo "test_batch rc=$?"; grep -E "^\[  (PASSED|FAILED)" $O/test_batch.log | head -3
run b1024 $NEW '^batch/(batch_f16_filter|batch_i8_filter)/batch:(16|128|1024)/'
save
