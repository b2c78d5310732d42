// Beyond the study: a warp per row reading 16 bytes per lane (512-byte runs), kRows rows per
// warp with all their loads issued before the first use, so enough bytes are in flight to
// stream the model at full bandwidth.
#pragma once
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

template <int kRows>
struct Float4WarpDot {
  static constexpr int kThreadsPerRow = 32;
  static constexpr int kBlockThreads = 256;
  static constexpr int kRowsPerBlock = kBlockThreads / 32 * kRows;
  static constexpr int kSegs = 3;  // 3 x 32 float4 cover D <= 384 in one round

  __device__ static void run(const DotArgs& a, const float* q) {
    const int lane = threadIdx.x % 32;
    const long long base = static_cast<long long>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32 * kRows;
    const int ld4 = a.ld / 4;
    const float4* q4 = reinterpret_cast<const float4*>(q);
    const float4* vec4 = reinterpret_cast<const float4*>(a.vectors);
    float acc[kRows] = {};
    for (int j0 = 0; j0 < ld4; j0 += 32 * kSegs) {
      float4 v[kRows][kSegs];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int s = 0; s < kSegs; ++s) {
          const int j = j0 + s * 32 + lane;
          v[r][s] = (base + r < a.rows && j < ld4) ? __ldcs(vec4 + (base + r) * ld4 + j) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
      for (int s = 0; s < kSegs; ++s) {
        const int j = j0 + s * 32 + lane;
        if (j < ld4) {
          const float4 qv = q4[j];
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            acc[r] += qv.x * v[r][s].x + qv.y * v[r][s].y + qv.z * v[r][s].z + qv.w * v[r][s].w;
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc[r] += __shfl_down_sync(0xffffffffu, acc[r], off);
    }
    if (lane == 0) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const long long row = base + r;
        if (row < a.rows) {
          a.sims[row] = cosine_from_dot(acc[r], a.query_norm, a.norms[row]);
          a.idx[row] = static_cast<int>(row);
        }
      }
    }
  }
};

}  // namespace distancies
