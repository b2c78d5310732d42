// The matmul study's host side (docs/matmul.md): the study's single-core CPU loop, the fp64
// product every GPU variant is checked against, and the error bounds.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/matmul/matmul_precision.hpp"

namespace distancies {

// Row-major m x k times k x n; the study's CPU baseline: three loops (i, j, k), one core.
void cpu_matmul(const float* a, const float* b, float* c, int m, int n, int k);

// The exact-enough reference: fp64 products and sums, and the same over |A| |B| (the scale of
// each element's rounding error).
struct Fp64Product {
  std::vector<double> c, abs_c;
};
Fp64Product fp64_matmul(const float* a, const float* b, int m, int n, int k);

// |fl(C)_ij - C_ij| <= bound * (|A| |B|)_ij, whatever the order of the sums:
//   fp32 (FMA or not, any order):  gamma_k = k u / (1 - k u), u = 2^-24;
//   TF32 inputs, fp32 sums:        2 u_t + u_t^2 + gamma_k, u_t = 2^-11 (each input rounded once);
//   FP16 inputs, fp32 sums:        the same with u_h = 2^-11 (inputs inside fp16's normal range).
double matmul_error_factor(MatmulPrecision p, int k);

// Deterministic test matrices: uniform in [-1, 1) from a seed.
std::vector<float> random_matrix(int rows, int cols, std::uint64_t seed);

}  // namespace distancies
