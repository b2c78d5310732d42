#!/usr/bin/env bash
# Run 44: the int8 walk with shared-memory counts a query and block (segments, packed after the
# pass) and its per-tile and per-candidate arithmetic in fp32 rounded outward (no fp64): its
# tests, then batch:16 / 128 / 1024 against batch_f16_filter, and refine strides 16 and 64.
. scripts/device_ab.sh run44 .carry/portable.tgz
gtest i8 400 '*i8*:*I8*:*Gemm*:*Seeded*:*Ties*:*Uncertif*:*Overflow*:*TooLong*'
run b1024 $NEW '^batch/(batch_f16_filter|batch_i8_filter)/batch:(16|128|1024)/'
for r in 16 64; do run refine$r $NEW DISTANCIES_GEMM_REFINE=$r '^batch/batch_i8_filter/batch:1024/'; done
save
