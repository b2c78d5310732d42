// The facts about a model's row norms that the range guard and the error bounds need.
#pragma once
#include <type_traits>

namespace distancies {

// out[0]: smallest positive norm, out[1]: largest finite norm, both as ordered bits (non-negative
// floats order like their bit patterns); out[2] set when a norm is NaN or Inf. T is float (a
// template only so the kernel can live in a header).
template <class T>
__global__ void norm_range_kernel(const T* norms, long long rows, unsigned* out) {
  static_assert(std::is_same<T, float>::value, "norms are fp32");
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= rows) return;
  const float n = norms[i];
  if (!isfinite(n)) {
    out[2] = 1u;
    return;
  }
  if (n > 0.0f) {
    atomicMin(out, __float_as_uint(n));
    atomicMax(out + 1, __float_as_uint(n));
  }
}

}  // namespace distancies
