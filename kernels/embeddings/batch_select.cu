#include "kernels/common/launch.hpp"
#include "kernels/embeddings/batch_select.cuh"

namespace distancies {

__global__ void inverse_norms_kernel(const float* norms, long long rows, float* inv) {
  const long long r = global_thread_index();
  if (r < rows) inv[r] = norms[r] > 0.0f ? 1.0f / norms[r] : 0.0f;
}

__global__ void clear_lists_kernel(SliceLists l, long long entries) {
  const long long i = global_thread_index();
  if (i < entries) {
    l.s[i] = kSentinelSim;
    l.r[i] = kSentinelRow;
  }
}

}  // namespace distancies
