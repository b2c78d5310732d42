// A warp-tiled, register-blocked fp32 SGEMM (beyond the study): 128 x 128 tiles of C a block,
// 8 steps of K staged in shared memory and double-buffered (the next slice is read into
// registers while this one is multiplied, so one barrier a slice suffices), each warp a 64 x 32
// tile, each thread 8 x 8 of C as 2 x 2 blocks of 4 x 4 held in registers. Per step of K a
// thread does 64 FMAs for 4 vector shared loads: the ratio the study's 8 x 8 register tile had,
// without its global-memory traffic.
#pragma once
#include "kernels/matmul/matmul_args.cuh"
#include "kernels/matmul/tile_order.cuh"

namespace distancies {

namespace warp_sgemm {
constexpr int kBM = 128, kBN = 128, kBK = 8, kThreads = 256, kGroup = 8;
}  // namespace warp_sgemm

// kVec: k and n are multiples of 4 and A, B, C start on 16 bytes, so every float4 of a row is
// wholly inside or outside the matrix (the launcher checks); otherwise scalar guarded loads.
template <bool kVec>
__global__ void __launch_bounds__(warp_sgemm::kThreads, 2) warp_tiled_sgemm_kernel(MatmulArgs a) {
  using namespace warp_sgemm;
  // A is stored k-major (transposed) so a thread's rows are one float4 load.
  __shared__ __align__(16) float as[2][kBK][kBM];
  __shared__ __align__(16) float bs[2][kBK][kBN];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const TileCoord tile = grouped_tile((a.m + kBM - 1) / kBM, (a.n + kBN - 1) / kBN, kGroup);
  const int bm = tile.m * kBM, bn = tile.n * kBN;
  // Warps 2 (M) x 4 (N); lanes 8 (M) x 4 (N). A lane's 4 x 4 blocks sit 32 rows and 16 columns
  // apart, so a warp's float4 shared loads cover 128 (A) and 64 (B) contiguous bytes.
  const int tm = (warp / 4) * 64 + (lane / 4) * 4;
  const int tn = (warp % 4) * 32 + (lane % 4) * 4;
  // Global loads: a thread reads 4 consecutive k of one row of A and 4 consecutive n of one row of B.
  const int a_row = tid / 2, a_k = (tid % 2) * 4;
  const int b_row = tid / 32, b_col = (tid % 32) * 4;

  float pa[4], pb[4];
  auto fetch = [&](int k0) {
    const int ar = bm + a_row, ak = k0 + a_k;
    const int bk = k0 + b_row, bc = bn + b_col;
    if constexpr (kVec) {
      const float4 z = make_float4(0.f, 0.f, 0.f, 0.f);
      const float4 va =
          ar < a.m && ak < a.k ? *reinterpret_cast<const float4*>(a.a + static_cast<long long>(ar) * a.k + ak) : z;
      const float4 vb =
          bk < a.k && bc < a.n ? *reinterpret_cast<const float4*>(a.b + static_cast<long long>(bk) * a.n + bc) : z;
      pa[0] = va.x, pa[1] = va.y, pa[2] = va.z, pa[3] = va.w;
      pb[0] = vb.x, pb[1] = vb.y, pb[2] = vb.z, pb[3] = vb.w;
    } else {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        pa[q] = ar < a.m && ak + q < a.k ? a.a[static_cast<long long>(ar) * a.k + ak + q] : 0.0f;
        pb[q] = bk < a.k && bc + q < a.n ? a.b[static_cast<long long>(bk) * a.n + bc + q] : 0.0f;
      }
    }
  };
  auto stash = [&](int buf) {
#pragma unroll
    for (int q = 0; q < 4; ++q) as[buf][a_k + q][a_row] = pa[q];
    *reinterpret_cast<float4*>(&bs[buf][b_row][b_col]) = make_float4(pb[0], pb[1], pb[2], pb[3]);
  };

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  fetch(0);
  stash(0);
  __syncthreads();
  int buf = 0;
  for (int k0 = 0; k0 < a.k; k0 += kBK) {
    const bool more = k0 + kBK < a.k;
    if (more) fetch(k0 + kBK);
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&as[buf][kk][tm]);
      const float4 a1 = *reinterpret_cast<const float4*>(&as[buf][kk][tm + 32]);
      const float4 b0 = *reinterpret_cast<const float4*>(&bs[buf][kk][tn]);
      const float4 b1 = *reinterpret_cast<const float4*>(&bs[buf][kk][tn + 16]);
      const float ra[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float rb[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    if (more) stash(buf ^ 1);
    __syncthreads();
    buf ^= 1;
  }

#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = bm + tm + (i % 4) + (i / 4) * 32;
    if (r >= a.m) continue;
    float* crow = a.c + static_cast<long long>(r) * a.n;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int c = bn + tn + half * 16;
      const float* v = &acc[i][half * 4];
      if (kVec && c + 3 < a.n) {
        *reinterpret_cast<float4*>(crow + c) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (c + q < a.n) crow[c + q] = v[q];
      }
    }
  }
}

}  // namespace distancies
