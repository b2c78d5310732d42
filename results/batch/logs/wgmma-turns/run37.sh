#!/usr/bin/env bash
# Run 37 (010f03b): the batch sweep, both halves in one call; stash the model's first piece.
set -u
mkdir -p /tmp/pp /tmp/m && tar xzf .carry/slim.tgz -C /tmp/pp && cp .carry/m1.part /tmp/m/
P=/tmp/pp/portable; . $P/gpu_env.sh
O=/tmp/o37; mkdir -p $O
save() { tar czf $OUT/o37.tgz -C /tmp o37; }
timeout 250 scripts/batch_sweep.sh $P/distancies-bench $O large > /dev/null 2> $O/large.err; echo "large rc=$?"; save
timeout 320 scripts/batch_sweep.sh $P/distancies-bench $O small > /dev/null 2> $O/small.err; echo "small rc=$?"; save
grep -hE "batch_f16_filter/batch:(16|32|64|128|1024)/manual_time_median" $O/*.console.txt | awk '{print $1, $2, $3}'
