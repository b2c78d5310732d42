// The study's two-pass algorithm (Pébay), four kernels: pass 1 per-block column sums, a
// merge into the means; pass 2 per-block sums of the powers of d = x - mean, a merge that
// applies the binomial correction for an inexact mean and the estimator.
#pragma once
#include "kernels/moments/block_merge.cuh"
#include "kernels/moments/column_scan.cuh"

namespace distancies {

// Per-block partials of both passes, entry [column * groups + block row group].
template <class T>
struct TwoPassScratch {
  T* sum;     // pass 1: sums; pass 2: sums of d, d^2, d^3, d^4 (4 arrays back to back)
  float* lo;  // pass 1: minima and maxima (exact constant-column detection)
  float* hi;
  T* mean;        // per column
  int* constant;  // per column: 1 when min == max
  int groups;
  long long cols;
};

template <class T, bool kColMajor, int kUnroll>
__global__ void __launch_bounds__(kMomentsMaxThreads)
    column_sum_partials_kernel(MomentsInput in, ColumnMap map, TwoPassScratch<T> w) {
  extern __shared__ __align__(16) unsigned char raw[];
  T sum = T(0);
  float lo = __int_as_float(0x7f800000), hi = -lo;
  long long col = 0;
  scan_column<kColMajor, kUnroll>(in, map, col, [&](float x) {
    sum += T(x);
    lo = fminf(lo, x);
    hi = fmaxf(hi, x);
  });
  T s[1] = {sum};
  block_combine_columns<1>(s, map.width, map.slots, reinterpret_cast<T*>(raw), [](int, T a, T b) { return a + b; });
  __syncthreads();
  float m[2] = {lo, hi};
  block_combine_columns<2>(m, map.width, map.slots, reinterpret_cast<float*>(raw),
                           [](int k, float a, float b) { return k == 0 ? fminf(a, b) : fmaxf(a, b); });
  const long long c = static_cast<long long>(blockIdx.x) * map.width + threadIdx.x;
  if (static_cast<int>(threadIdx.x) < map.width && c < in.cols) {
    const long long i = c * w.groups + blockIdx.y;
    w.sum[i] = s[0];
    w.lo[i] = m[0];
    w.hi[i] = m[1];
  }
}

// One warp per column: the column's sum over the blocks, divided by n.
template <class T>
__global__ void column_mean_kernel(TwoPassScratch<T> w, long long rows) {
  const long long col = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (col >= w.cols) return;
  T sum = T(0);
  float lo = __int_as_float(0x7f800000), hi = -lo;
  for (int g = lane; g < w.groups; g += 32) {
    const long long i = col * w.groups + g;
    sum += w.sum[i];
    lo = fminf(lo, w.lo[i]);
    hi = fmaxf(hi, w.hi[i]);
  }
  for (int off = 16; off > 0; off >>= 1) {
    sum += __shfl_down_sync(0xffffffffu, sum, off);
    lo = fminf(lo, __shfl_down_sync(0xffffffffu, lo, off));
    hi = fmaxf(hi, __shfl_down_sync(0xffffffffu, hi, off));
  }
  if (lane == 0) {
    w.mean[col] = sum / T(rows);
    w.constant[col] = lo == hi;
  }
}

template <class T, bool kColMajor, int kUnroll>
__global__ void __launch_bounds__(kMomentsMaxThreads)
    column_central_partials_kernel(MomentsInput in, ColumnMap map, TwoPassScratch<T> w) {
  extern __shared__ __align__(16) unsigned char raw[];
  const int t = threadIdx.x;
  const long long my_col = static_cast<long long>(blockIdx.x) * map.width + t % map.width;
  const T mean = (t < map.width * map.slots && my_col < in.cols) ? w.mean[my_col] : T(0);
  T s[4] = {T(0), T(0), T(0), T(0)};
  long long col = 0;
  scan_column<kColMajor, kUnroll>(in, map, col, [&](float x) {
    const T d = T(x) - mean, d2 = d * d;
    s[0] += d;
    s[1] += d2;
    s[2] = fma(d2, d, s[2]);
    s[3] = fma(d2, d2, s[3]);
  });
  block_combine_columns<4>(s, map.width, map.slots, reinterpret_cast<T*>(raw), [](int, T a, T b) { return a + b; });
  const long long c = static_cast<long long>(blockIdx.x) * map.width + t;
  if (t < map.width && c < in.cols) {
    const long long stride = w.cols * w.groups, i = c * w.groups + blockIdx.y;
#pragma unroll
    for (int k = 0; k < 4; ++k) w.sum[k * stride + i] = s[k];
  }
}

// kCorrect: subtract the terms that vanish for an exact mean (S1 = sum of d is then 0):
//   M2 = S2 - S1^2/n, M3 = S3 - 3 S1 S2/n + 2 S1^3/n^2,
//   M4 = S4 - 4 S1 S3/n + 6 S1^2 S2/n^2 - 3 S1^4/n^3.
template <class T, bool kCorrect>
__global__ void column_central_merge_kernel(TwoPassScratch<T> w, long long rows, MomentEstimator e, MomentsOutput out) {
  const long long col = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (col >= w.cols) return;
  const long long stride = w.cols * w.groups;
  T s[4] = {T(0), T(0), T(0), T(0)};
  for (int g = lane; g < w.groups; g += 32)
#pragma unroll
    for (int k = 0; k < 4; ++k) s[k] += w.sum[k * stride + col * w.groups + g];
  for (int off = 16; off > 0; off >>= 1)
#pragma unroll
    for (int k = 0; k < 4; ++k) s[k] += __shfl_down_sync(0xffffffffu, s[k], off);
  if (lane != 0) return;
  const T n = T(rows), a = s[0] / n;
  T m2 = s[1], m3 = s[2], m4 = s[3];
  if (kCorrect) {
    m2 = s[1] - s[0] * a;
    m3 = s[2] - T(3) * a * s[1] + T(2) * a * a * s[0];
    m4 = s[3] - T(4) * a * s[2] + T(6) * a * a * s[1] - T(3) * a * a * a * s[0];
  }
  if (w.constant[col]) m2 = m3 = m4 = T(0);  // exact: every value equal
  if (m2 < T(0)) m2 = T(0);
  // The corrected variant also moves the mean by the mean of d; the uncorrected keeps pass 1's.
  const double mean = double(w.mean[col]) + (kCorrect ? double(a) : 0.0);
  finalize_moments(rows, mean, double(m2), double(m3), double(m4), e, out.mean + col, out.variance + col,
                   out.skewness + col, out.kurtosis + col);
}

}  // namespace distancies
