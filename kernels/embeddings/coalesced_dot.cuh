// The study's coalescing family: T threads per row read T consecutive floats (4T-byte runs;
// the study kept 32 bytes and discarded 16/64/128), shuffle-reduced within the T lanes.
#pragma once
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

template <int T>
struct CoalescedDot {
  static_assert(T >= 1 && T <= 32 && (T & (T - 1)) == 0, "threads per row: a power of two <= 32");
  static constexpr int kThreadsPerRow = T;
  static constexpr int kBlockThreads = 256;
  static constexpr int kRowsPerBlock = kBlockThreads / kThreadsPerRow;

  __device__ static void run(const DotArgs& a, const float* q) {
    const int lane = threadIdx.x % T;
    const long long row = (static_cast<long long>(blockIdx.x) * kBlockThreads + threadIdx.x) / T;
    const bool live = row < a.rows;
    float sum = 0.0f;
    if (live) {
      const float* v = a.vectors + row * a.ld;
      for (int j = lane; j < a.dim; j += T) sum += q[j] * v[j];
    }
#pragma unroll
    for (int off = T / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, T);
    if (live && lane == 0) {
      a.sims[row] = cosine_from_dot(sum, a.query_norm, a.norms[row]);
      a.idx[row] = static_cast<int>(row);
    }
  }
};

}  // namespace distancies
