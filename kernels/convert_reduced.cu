#include "kernels/convert_reduced.cuh"

namespace distancies {

__global__ void min_positive_norm_kernel(const float* norms, long long rows, unsigned* out_bits) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < rows && norms[i] > 0.0f) atomicMin(out_bits, __float_as_uint(norms[i]));
}

}  // namespace distancies
