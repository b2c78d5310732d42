// What tests/kernel_headers must reject: a non-template kernel defined in a header.
#pragma once

__global__ void defined_in_a_header(int* p) { *p = 1; }
