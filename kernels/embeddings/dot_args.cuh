// Arguments shared by every DotProduct kernel, and the cosine/ordering rules they share.
#pragma once
#include <cfloat>
#include <climits>

#include "kernels/common/ranking.hpp"

namespace distancies {

struct DotArgs {
  const float* vectors;  // rows * ld floats, row starts 16-byte aligned
  const float* norms;    // rows
  int rows;
  int dim;
  int ld;
  const float* query;  // dim floats
  float query_norm;
  float* sims;  // out: rows similarities
  int* idx;     // out: rows row indices
};

#if defined(__CUDACC__)
// The study's division; a zero-norm row has similarity 0 (cosine undefined there).
__device__ __forceinline__ float cosine_from_dot(float dot, float query_norm, float row_norm) {
  return row_norm > 0.0f ? dot / (query_norm * row_norm) : 0.0f;
}

// The block's threads copy a.query, zero-padded to a.ld floats, to `out` (shared memory); the
// caller synchronises before reading it.
__device__ __forceinline__ void stage_query(const DotArgs& a, float* out) {
  for (int j = threadIdx.x; j < a.ld; j += blockDim.x) out[j] = j < a.dim ? a.query[j] : 0.0f;
}

#endif

// Below every real similarity and every real row: pads partial chunks.
constexpr float kSentinelSim = -FLT_MAX;
constexpr int kSentinelRow = INT_MAX;

}  // namespace distancies
