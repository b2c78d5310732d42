#!/usr/bin/env bash
# Run 51 (786d514, run 50's unpacked build): test_batch whole; memcheck over the int8 tests,
# synccheck over one; stash the GloVe model's second piece and the analogy set for run 52.
set -u
P=/tmp/pp/portable; . $P/gpu_env.sh; T=$P/test_batch
O=/tmp/run51; mkdir -p $O
save() { tar czf $OUT/run51.tgz -C /tmp run51; }
mkdir -p /tmp/m && cp .carry/an/m2.part .carry/an/analogy.txt /tmp/m/
timeout 240 $T > $O/test_batch.log 2>&1; echo "test_batch rc=$?"; grep -E "PASSED|FAILED" $O/test_batch.log | head -5; save
timeout 200 /usr/local/cuda/bin/compute-sanitizer --tool memcheck $T --gtest_filter='*i8_filter_b37*:*i8_filter_zero*:*i8_filter_b5*:*TiledI8*:*Overflow*:*Uncertif*' > $O/memcheck.log 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/memcheck.log | head -4
timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool synccheck $T --gtest_filter='*i8_filter_b37*' > $O/synccheck.log 2>&1
echo "synccheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $O/synccheck.log | head -3
save
