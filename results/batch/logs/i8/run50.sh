#!/usr/bin/env bash
# Run 50 (786d514): the batch sweep behind auto's table, both halves in one call, with
# batch_i8_filter; stash the GloVe model's first piece for run 51.
. scripts/device_ab.sh run50 .carry/portable.tgz
mkdir -p /tmp/m && cp .carry/m1.part /tmp/m/
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.csv
timeout 250 scripts/batch_sweep.sh $NEW $O large > /dev/null 2> $O/large.err; echo "large rc=$?"; save
timeout 330 scripts/batch_sweep.sh $NEW $O small > /dev/null 2> $O/small.err; echo "small rc=$?"; save
grep -hE "batch_(f16|i8)_filter/batch:(1|16|128|1024|8192)/manual_time_median" $O/*.console.txt | awk '{print $1, $2, $3}'
