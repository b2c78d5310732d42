// C = A * B, row-major float32: A is m x k, B is k x n, C is m x n (docs/matmul.md).
#pragma once
#include <cuda_fp16.h>

#include "kernels/matmul/matmul_precision.hpp"

namespace distancies {

struct MatmulArgs {
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int m = 0, n = 0, k = 0;
  // The FP16 variants' inputs: half copies of A and B made by the harness before any timing,
  // rows padded with zeros to lda16 = k and ldb16 = n rounded up to 8, so every row starts on
  // 16 bytes (one cp.async chunk) whatever the shape, and B given zero rows up to k rounded up
  // to 8 (so a consumer may run K to lda16). Null unless the harness made them.
  const __half* a16 = nullptr;
  const __half* b16 = nullptr;
  int lda16 = 0, ldb16 = 0;
};

// Every kernel of the study's sweep runs 16 x 16 threads a block; a thread owns a tile of C.
constexpr int kMatmulBlockSide = 16;

// Half rows padded to a multiple of 8 elements (16 bytes).
constexpr int matmul_half_ld(int cols) { return (cols + 7) / 8 * 8; }

}  // namespace distancies
