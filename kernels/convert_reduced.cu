#include "kernels/convert_reduced.cuh"
#include "kernels/launch.hpp"

namespace distancies {

__global__ void min_positive_norm_kernel(const float* norms, long long rows, unsigned* out_bits) {
  const long long i = global_thread_index();
  if (i < rows && norms[i] > 0.0f) atomicMin(out_bits, __float_as_uint(norms[i]));
}

}  // namespace distancies
