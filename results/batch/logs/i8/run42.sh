#!/usr/bin/env bash
# Run 42: the int8 walk's first run: its tests (the copy's bound, the registry shapes, the walk's
# cases, ties, seeds, overflow) and batch:16 / 128 / 1024 against batch_f16_filter.
. scripts/device_ab.sh run42 .carry/portable.tgz
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.txt
gtest tiled 120 '*TiledI8*'
gtest i8 400 '*i8*:*I8*:*Gemm*:*Seeded*:*Ties*:*Uncertif*:*Overflow*:*TooLong*'
run b1024 $NEW '^batch/(batch_f16_filter|batch_i8_filter)/batch:(16|128|1024)/'
save
