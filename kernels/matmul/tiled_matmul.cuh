// The study's tiled kernels (matmul-and-list-intersection report, part 1), in CUDA. A thread
// computes a TY x TX tile of C; threads of a block are 16 x 16, so a block covers
// (16 TY) x (16 TX) of C. Rows and columns beyond C are guarded, so any shape works.
#pragma once
#include "kernels/matmul/matmul_args.cuh"

namespace distancies {

namespace matmul_detail {
__device__ __forceinline__ float load_or_zero(const float* p, long long i, bool in) { return in ? p[i] : 0.0f; }
}  // namespace matmul_detail

// The study's counter-example: three loops over the tile and K, every product read from global
// memory (2 TX TY K loads a thread), no input registers.
template <int TY, int TX>
__global__ void three_loop_tiled_kernel(MatmulArgs a) {
  const int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * TY;
  const int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * TX;
  for (int i = 0; i < TY; ++i) {
    const int r = row0 + i;
    if (r >= a.m) return;
    for (int j = 0; j < TX; ++j) {
      const int c = col0 + j;
      if (c >= a.n) break;
      float s = 0.0f;
      for (int k = 0; k < a.k; ++k)
        s = fmaf(a.a[static_cast<long long>(r) * a.k + k], a.b[static_cast<long long>(k) * a.n + c], s);
      a.c[static_cast<long long>(r) * a.n + c] = s;
    }
  }
}

// The study's input-register tile: per step of K, TY values of A and TX of B in registers
// (subA, subB), then their TY x TX outer product into the accumulators.
template <int TY, int TX>
__global__ void register_tile_kernel(MatmulArgs a) {
  using matmul_detail::load_or_zero;
  const int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * TY;
  const int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * TX;
  float acc[TY][TX];
#pragma unroll
  for (int i = 0; i < TY; ++i)
#pragma unroll
    for (int j = 0; j < TX; ++j) acc[i][j] = 0.0f;
  for (int k = 0; k < a.k; ++k) {
    float sub_a[TY], sub_b[TX];
#pragma unroll
    for (int i = 0; i < TY; ++i)
      sub_a[i] = load_or_zero(a.a, static_cast<long long>(row0 + i) * a.k + k, row0 + i < a.m);
#pragma unroll
    for (int j = 0; j < TX; ++j)
      sub_b[j] = load_or_zero(a.b, static_cast<long long>(k) * a.n + col0 + j, col0 + j < a.n);
#pragma unroll
    for (int i = 0; i < TY; ++i)
#pragma unroll
      for (int j = 0; j < TX; ++j) acc[i][j] = fmaf(sub_a[i], sub_b[j], acc[i][j]);
  }
#pragma unroll
  for (int i = 0; i < TY; ++i)
#pragma unroll
    for (int j = 0; j < TX; ++j)
      if (row0 + i < a.m && col0 + j < a.n) a.c[static_cast<long long>(row0 + i) * a.n + col0 + j] = acc[i][j];
}

// The study's register "length": a 2 x 2 tile that reads L steps of K at once, L x (2 + 2)
// inputs in registers (the study's "2L + 2L"), then accumulates them.
template <int L>
__global__ void register_length_kernel(MatmulArgs a) {
  using matmul_detail::load_or_zero;
  constexpr int T = 2;
  const int row0 = (blockIdx.y * blockDim.y + threadIdx.y) * T;
  const int col0 = (blockIdx.x * blockDim.x + threadIdx.x) * T;
  float acc[T][T] = {{0.0f, 0.0f}, {0.0f, 0.0f}};
  for (int k0 = 0; k0 < a.k; k0 += L) {
    float sub_a[T][L], sub_b[L][T];
#pragma unroll
    for (int l = 0; l < L; ++l) {
      const bool kin = k0 + l < a.k;
#pragma unroll
      for (int i = 0; i < T; ++i)
        sub_a[i][l] = load_or_zero(a.a, static_cast<long long>(row0 + i) * a.k + k0 + l, kin && row0 + i < a.m);
#pragma unroll
      for (int j = 0; j < T; ++j)
        sub_b[l][j] = load_or_zero(a.b, static_cast<long long>(k0 + l) * a.n + col0 + j, kin && col0 + j < a.n);
    }
#pragma unroll
    for (int l = 0; l < L; ++l)
#pragma unroll
      for (int i = 0; i < T; ++i)
#pragma unroll
        for (int j = 0; j < T; ++j) acc[i][j] = fmaf(sub_a[i][l], sub_b[l][j], acc[i][j]);
  }
#pragma unroll
  for (int i = 0; i < T; ++i)
#pragma unroll
    for (int j = 0; j < T; ++j)
      if (row0 + i < a.m && col0 + j < a.n) a.c[static_cast<long long>(row0 + i) * a.n + col0 + j] = acc[i][j];
}

}  // namespace distancies
