#!/usr/bin/env bash
# Run 56: the registry's GPU suites (test_registry, test_gpu_variants) and test_batch at the
# final commit: the epilogue split and the new batch scan change nothing else.
. scripts/device_ab.sh run56 .carry/portable.tgz
for t in test_registry test_gpu_variants test_batch; do
  timeout 250 $P/$t > $O/$t.log 2>&1; echo "$t rc=$?"; grep -E "^\[  (PASSED|FAILED)" $O/$t.log | head -3
done
save
