// Study DotProduct v1 (versions V1, V2): one thread per row. Neighbouring threads read rows
// `ld` floats apart, so a warp's loads are not coalesced.
#pragma once
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

struct ThreadPerRowDot {
  static constexpr int kThreadsPerRow = 1;
  static constexpr int kBlockThreads = 256;
  static constexpr int kRowsPerBlock = kBlockThreads / kThreadsPerRow;

  __device__ static void run(const DotArgs& a, const float* q) {
    const long long row = static_cast<long long>(blockIdx.x) * kBlockThreads + threadIdx.x;
    if (row >= a.rows) return;
    const float* v = a.vectors + row * a.ld;
    float dot = 0.0f;
    for (int j = 0; j < a.dim; ++j) dot += q[j] * v[j];
    a.sims[row] = cosine_from_dot(dot, a.query_norm, a.norms[row]);
    a.idx[row] = static_cast<int>(row);
  }
};

}  // namespace distancies
