// C = A * B, row-major float32: A is m x k, B is k x n, C is m x n (docs/matmul.md).
#pragma once

namespace distancies {

struct MatmulArgs {
  const float* a = nullptr;
  const float* b = nullptr;
  float* c = nullptr;
  int m = 0, n = 0, k = 0;
};

// Every kernel of the study's sweep runs 16 x 16 threads a block; a thread owns a tile of C.
constexpr int kMatmulBlockSide = 16;

}  // namespace distancies
