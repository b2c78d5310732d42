// The FP16 variants' inputs (matmul_args.cuh): a row-major float matrix rounded to half once,
// each row padded with zeros to ld elements and rows of zeros added up to out_rows (defined in
// half_operands.cu).
#pragma once
#include <cuda_fp16.h>

namespace distancies {

__global__ void pad_to_half_kernel(const float* in, __half* out, int rows, int cols, int out_rows, int ld);

}  // namespace distancies
