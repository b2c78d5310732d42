// fp32 model -> 16-bit copy (round to nearest), with the facts the error bound needs.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/common/launch.hpp"

namespace distancies {

template <class T>
__device__ T to_reduced(float x);
template <>
__device__ inline __half to_reduced<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ inline __nv_bfloat16 to_reduced<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// One thread per element; out_of_range set when a finite value becomes infinite (fp16: |x_j| >= 65520).
template <class T>
__global__ void convert_reduced_kernel(const float* v, long long rows, int dim, int ld, int rld, T* out,
                                       int* out_of_range) {
  const long long i = global_thread_index();
  if (i >= rows * rld) return;
  const long long row = i / rld;
  const int col = static_cast<int>(i % rld);
  const float x = col < dim ? v[row * ld + col] : 0.0f;
  const T y = to_reduced<T>(x);
  if (isinf(static_cast<float>(y))) *out_of_range = 1;
  out[i] = y;
}

}  // namespace distancies
