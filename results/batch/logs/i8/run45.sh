#!/usr/bin/env bash
# Run 45: the segments gathered by the select (select_segments_kernel) instead of a packing pass,
# and status set where a segment overflowed (run 44's packing let the select read past the
# candidates on overflow: an illegal address in the re-rank, found by memcheck): the tests, then
# batch:16 / 128 / 1024 against batch_f16_filter.
. scripts/device_ab.sh run45 .carry/portable.tgz
gtest i8 400 '*i8*:*I8*:*Gemm*:*Seeded*:*Ties*:*Uncertif*:*Overflow*:*TooLong*'
run b1024 $NEW '^batch/(batch_f16_filter|batch_i8_filter)/batch:(16|128|1024)/'
save
