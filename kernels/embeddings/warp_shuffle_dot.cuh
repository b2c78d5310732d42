// Study DotProduct v3 (version V4): the 8-thread split of shared_reduce_dot, reduced in
// registers with __shfl_down_sync at offsets 4, 2, 1.
#pragma once
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

struct WarpShuffleDot {
  static constexpr int kThreadsPerRow = 8;
  static constexpr int kBlockThreads = 256;
  static constexpr int kRowsPerBlock = kBlockThreads / kThreadsPerRow;

  __device__ static void run(const DotArgs& a, const float* q) {
    const int lane = threadIdx.x % kThreadsPerRow;
    const long long row = (static_cast<long long>(blockIdx.x) * kBlockThreads + threadIdx.x) / kThreadsPerRow;
    const bool live = row < a.rows;  // every lane stays for the full-mask shuffles
    float sum = 0.0f;
    if (live) {
      const float* v = a.vectors + row * a.ld;
      for (int j = lane; j < a.dim; j += kThreadsPerRow) sum += q[j] * v[j];
    }
    sum += __shfl_down_sync(0xffffffffu, sum, 4, kThreadsPerRow);
    sum += __shfl_down_sync(0xffffffffu, sum, 2, kThreadsPerRow);
    sum += __shfl_down_sync(0xffffffffu, sum, 1, kThreadsPerRow);
    if (live && lane == 0) {
      a.sims[row] = cosine_from_dot(sum, a.query_norm, a.norms[row]);
      a.idx[row] = static_cast<int>(row);
    }
  }
};

}  // namespace distancies
