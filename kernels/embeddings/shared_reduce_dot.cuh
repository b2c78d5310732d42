// Study DotProduct v2 (version V3): 8 threads per row, thread t takes components t, t+8, ...
// so 8 neighbouring threads read 32 consecutive bytes; partial sums are reduced 8->4->2->1
// in shared memory with __syncwarp() between steps (the 8 threads share one warp).
#pragma once
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

struct SharedReduceDot {
  static constexpr int kThreadsPerRow = 8;
  static constexpr int kBlockThreads = 256;
  static constexpr int kRowsPerBlock = kBlockThreads / kThreadsPerRow;

  __device__ static void run(const DotArgs& a, const float* q) {
    __shared__ float partial[kBlockThreads];
    const int lane = threadIdx.x % kThreadsPerRow;
    const long long row = (static_cast<long long>(blockIdx.x) * kBlockThreads + threadIdx.x) / kThreadsPerRow;
    const bool live = row < a.rows;  // dead threads still reach every __syncwarp
    float sum = 0.0f;
    if (live) {
      const float* v = a.vectors + row * a.ld;
      for (int j = lane; j < a.dim; j += kThreadsPerRow) sum += q[j] * v[j];
    }
    partial[threadIdx.x] = sum;
    __syncwarp();
    for (int step = kThreadsPerRow / 2; step > 0; step /= 2) {
      if (lane < step) partial[threadIdx.x] += partial[threadIdx.x + step];
      __syncwarp();
    }
    if (live && lane == 0) {
      a.sims[row] = cosine_from_dot(partial[threadIdx.x], a.query_norm, a.norms[row]);
      a.idx[row] = static_cast<int>(row);
    }
  }
};

}  // namespace distancies
