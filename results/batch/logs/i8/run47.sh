#!/usr/bin/env bash
# Run 47: ncu of the int8 filter pass at B = 1,024 after run 46 (stalls by SASS line).
. scripts/device_ab.sh run47 .carry/portable.tgz
ncu_walk i8 '^batch/batch_i8_filter/batch:1024/'
