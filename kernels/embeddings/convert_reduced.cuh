// fp32 model -> 16-bit copy (round to nearest), with the facts the error bound needs; fp32 model
// -> int8 copy with a per-row scale.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/common/launch.hpp"
#include "kernels/embeddings/centre.cuh"

namespace distancies {

template <class T>
__device__ T to_reduced(float x);
template <>
__device__ inline __half to_reduced<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ inline __nv_bfloat16 to_reduced<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// One thread per element; out_of_range set when a finite value becomes infinite (fp16: |x_j| >= 65520).
// With `mean`, the centred copy: y = x - norms[row] mean (centre.cuh) in place of x.
template <class T>
__global__ void convert_reduced_kernel(const float* v, long long rows, int dim, int ld, int rld, T* out,
                                       int* out_of_range, const float* norms = nullptr, const float* mean = nullptr) {
  const long long i = global_thread_index();
  if (i >= rows * rld) return;
  const long long row = i / rld;
  const int col = static_cast<int>(i % rld);
  float x = col < dim ? v[row * ld + col] : 0.0f;
  if (mean && col < dim) x = centred_value(x, norms[row], mean[col]);
  const T y = to_reduced<T>(x);
  if (isinf(static_cast<float>(y))) *out_of_range = 1;
  out[i] = y;
}

// One warp per row: s = max_j |x_j| / 127, q_j = rint(x_j / s) clamped to [-127, 127], so
// |x_j - s q_j| <= s / 2 (up to the division's rounding, which the bound's margin covers). A
// zero row stores s = 0 and zeros; a row with a NaN or Inf, or whose largest value is below
// kSmallestMax (s would be subnormal and x_j / s inexact), stores s = NaN and zeros, so its
// approximate similarity is NaN and it stays a candidate (approx_rank_key).
// With `mean`, the centred copy: y = x - norms[row] mean (centre.cuh) in place of x, and
// correction[row] = mu . (y - s codes), the quantisation error along mu, summed in fp64 (within
// 2^-50 of it relative to sum |mu_j| |y_j - s c_j|) and rounded once to fp32.
template <class Int8>
__global__ void quantize_i8_kernel(const float* v, long long rows, int dim, int ld, int rld, Int8* out, float* scale,
                                   const float* norms = nullptr, const float* mean = nullptr,
                                   float* correction = nullptr) {
  const long long row = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* x = v + row * ld;
  const float n = mean ? norms[row] : 0.0f;
  auto value = [&](int j) { return mean ? centred_value(x[j], n, mean[j]) : x[j]; };
  float m = 0.0f;
  bool finite = true;
  for (int j = lane; j < dim; j += 32) {
    const float xj = value(j);
    m = fmaxf(m, fabsf(xj));
    finite = finite && isfinite(xj);
  }
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  finite = __all_sync(0xffffffffu, finite);
  constexpr float kSmallestMax = 0x1p-118f;  // variants/embeddings/precision.hpp's kI8SmallestMax
  const bool usable = finite && (m == 0.0f || m >= kSmallestMax);
  const float s = usable ? m / 127.0f : __int_as_float(0x7fc00000);
  Int8* o = out + row * rld;
  double c = 0.0;
  for (int j = lane; j < rld; j += 32) {
    const float yj = j < dim ? value(j) : 0.0f;
    float q = 0.0f;
    if (usable && s > 0.0f && j < dim) q = fminf(127.0f, fmaxf(-127.0f, rintf(yj / s)));
    o[j] = static_cast<Int8>(q);
    if (mean && usable && j < dim) c += static_cast<double>(mean[j]) * (static_cast<double>(yj) - double(s) * q);
  }
  if (correction) {
    for (int off = 16; off > 0; off /= 2) c += __shfl_xor_sync(0xffffffffu, c, off);
    if (lane == 0) correction[row] = static_cast<float>(c);
  }
  if (lane == 0) scale[row] = s;
}

}  // namespace distancies
