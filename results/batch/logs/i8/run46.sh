#!/usr/bin/env bash
# Run 46: the filtered scans' thresholds at the k-th best instead of the K-th (both pipelines),
# and the int8 scan's segments a tile a part larger: the filter tests of both pipelines, then
# batch:16 / 128 / 1024, and refine strides 16 and 64 at 1,024.
. scripts/device_ab.sh run46 .carry/portable.tgz
gtest filter 500 "$FILTER_TESTS:*i8*:*I8*:*Overflow*:*TooLong*:*f16_filter*"
run b1024 $NEW '^batch/(batch_f16_filter|batch_i8_filter)/batch:(16|128|1024)/'
for r in 16 64; do run refine$r $NEW DISTANCIES_GEMM_REFINE=$r '^batch/(batch_f16_filter|batch_i8_filter)/batch:1024/'; done
save
