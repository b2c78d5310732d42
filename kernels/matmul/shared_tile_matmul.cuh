// Shared-memory tiling (beyond the study): the register tile of tiled_matmul.cuh, but a block
// first stages a (16 TY) x 16 slice of A and a 16 x (16 TX) slice of B in shared memory, so an
// input is read from global memory once per block instead of once per thread of its row or
// column; each thread then runs the study's register tile over the shared slices.
#pragma once
#include "kernels/matmul/matmul_args.cuh"

namespace distancies {

template <int TY, int TX>
__global__ void __launch_bounds__(256) shared_tile_kernel(MatmulArgs a) {
  constexpr int kBK = 16, kBM = kMatmulBlockSide * TY, kBN = kMatmulBlockSide * TX;
  // A is stored transposed (k-major) so a thread's TY rows sit side by side; one float of
  // padding a row keeps the transposing stores of a warp on distinct banks.
  __shared__ float as[kBK][kBM + 1];
  __shared__ float bs[kBK][kBN];
  const int tid = threadIdx.y * kMatmulBlockSide + threadIdx.x;
  const int bm = blockIdx.y * kBM, bn = blockIdx.x * kBN;
  float acc[TY][TX];
#pragma unroll
  for (int i = 0; i < TY; ++i)
#pragma unroll
    for (int j = 0; j < TX; ++j) acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < a.k; k0 += kBK) {
    // Consecutive threads read consecutive k of a row of A and consecutive columns of B.
    for (int i = tid; i < kBM * kBK; i += 256) {
      const int r = i / kBK, c = i % kBK;
      const bool in = bm + r < a.m && k0 + c < a.k;
      as[c][r] = in ? a.a[static_cast<long long>(bm + r) * a.k + k0 + c] : 0.0f;
    }
    for (int i = tid; i < kBK * kBN; i += 256) {
      const int r = i / kBN, c = i % kBN;
      const bool in = k0 + r < a.k && bn + c < a.n;
      bs[r][c] = in ? a.b[static_cast<long long>(k0 + r) * a.n + bn + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float sub_a[TY], sub_b[TX];
#pragma unroll
      for (int i = 0; i < TY; ++i) sub_a[i] = as[kk][threadIdx.y * TY + i];
#pragma unroll
      for (int j = 0; j < TX; ++j) sub_b[j] = bs[kk][threadIdx.x * TX + j];
#pragma unroll
      for (int i = 0; i < TY; ++i)
#pragma unroll
        for (int j = 0; j < TX; ++j) acc[i][j] = fmaf(sub_a[i], sub_b[j], acc[i][j]);
    }
    __syncthreads();
  }
  const int row0 = bm + threadIdx.y * TY, col0 = bn + threadIdx.x * TX;
#pragma unroll
  for (int i = 0; i < TY; ++i)
#pragma unroll
    for (int j = 0; j < TX; ++j)
      if (row0 + i < a.m && col0 + j < a.n) a.c[static_cast<long long>(row0 + i) * a.n + col0 + j] = acc[i][j];
}

}  // namespace distancies
