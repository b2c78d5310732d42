#!/usr/bin/env bash
# Run 49: against run 48's build in the same call: a smaller sample where a refine pass follows
# (sqrt(k rows) rows), the int8 walk's per-tile threshold without a division, a vote for 8 scores;
# the filter tests; the int8 pipeline at refine strides 16 and 64.
. scripts/device_ab.sh run49 .carry/portable.tgz .carry/old-r48.tgz
gtest filter 500 "$FILTER_TESTS:*i8*:*I8*:*Overflow*:*TooLong*:*f16_filter*"
F='^batch/(batch_f16_filter|batch_i8_filter)/batch:(16|128|1024)/'
run old $OLD "$F"; run new $NEW "$F"; run old2 $OLD "$F"; run new2 $NEW "$F"
for r in 16 64; do run refine$r $NEW DISTANCIES_GEMM_REFINE=$r '^batch/batch_i8_filter/batch:1024/'; done
save
