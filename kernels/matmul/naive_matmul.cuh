// The study's first kernel: one thread per element of C, a dot product of a row of A and a
// column of B read from global memory (defined in naive_matmul.cu).
#pragma once
#include "kernels/matmul/matmul_args.cuh"

namespace distancies {

__global__ void naive_matmul_kernel(MatmulArgs a);

}  // namespace distancies
