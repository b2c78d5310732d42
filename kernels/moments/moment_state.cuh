// Per-column moment state (n, mean, M2, M3, M4) and the pairwise update that merges two of
// them (Chan et al. for M2, Pébay 2008 eq. 2.1-2.3 for M3 and M4). Merging is exact in exact
// arithmetic and stable in floating point: it never subtracts two large sums.
#pragma once
#include "kernels/moments/moments_args.cuh"

namespace distancies {

template <class T>
struct MomentState {
  long long n;  // 0: empty (merging with it is the identity)
  T mean, m2, m3, m4;
};

template <class T>
__device__ __forceinline__ MomentState<T> empty_state() {
  return {0, T(0), T(0), T(0), T(0)};
}

template <class T>
__device__ __forceinline__ MomentState<T> merge_states(const MomentState<T>& a, const MomentState<T>& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  const T na = T(a.n), nb = T(b.n), n = T(a.n + b.n);
  const T d = b.mean - a.mean;
  const T dn = d / n, dn2 = dn * dn;
  const T nab = na * nb;
  MomentState<T> r;
  r.n = a.n + b.n;
  r.mean = a.mean + dn * nb;
  r.m2 = a.m2 + b.m2 + d * dn * nab;
  r.m3 = a.m3 + b.m3 + d * dn2 * nab * (na - nb) + T(3) * dn * (na * b.m2 - nb * a.m2);
  r.m4 = a.m4 + b.m4 + d * dn2 * dn * nab * (na * na - nab + nb * nb) + T(6) * dn2 * (na * na * b.m2 + nb * nb * a.m2) +
         T(4) * dn * (na * b.m3 - nb * a.m3);
  return r;
}

// One thread's running sums of the powers of d = x - shift, where shift is the column's first
// value, the same for every thread of the column: d stays of the order of the spread, so a
// large offset (mean 1e6, sd 1) costs nothing, and states hold their mean RELATIVE to the
// shift, so merges never round a mean of 1e6 to float (that would cost ~1e-3 of the
// variance). Four multiply-adds per element, no division.
// In fp32, s1 and s2 are compensated (Kahan): a thread sums ~1,000 elements, and the rounding
// of the plain sums, amplified by M2 = s2 - s1^2/n when the shift lies a few sd from the mean,
// was the whole of one_pass's variance error (1.2e-6 at 2^28 x 300; docs/moments.md).
// add_group sums a group of loads plainly first and compensates once a group: the group's few
// roundings are small against the running sum's, and the compensation's three adds are paid
// once a group instead of once an element (the loop's instructions were most of what the SM
// issued: docs/moments.md, "Fewer instructions a element").
template <class T>
struct ShiftedSums {
  long long n = 0;
  T shift = T(0), s1 = T(0), s2 = T(0), s3 = T(0), s4 = T(0);
  T c1 = T(0), c2 = T(0);  // Kahan compensations of s1, s2 (fp32 only)

  __device__ __forceinline__ static void kahan_add(T& s, T& c, T x) {
    const T y = x - c;
    const T t = s + y;
    c = (t - s) - y;
    s = t;
  }

  // s1 += a1 and s2 += a2, compensated in fp32.
  __device__ __forceinline__ void add_to_sums(T a1, T a2) {
    if constexpr (sizeof(T) == 4) {
      kahan_add(s1, c1, a1);
      kahan_add(s2, c2, a2);
    } else {
      s1 += a1;
      s2 += a2;
    }
  }

  __device__ __forceinline__ void add(float x) {
    const T d = T(x) - shift;
    const T d2 = d * d;
    add_to_sums(d, d2);
    s3 = fma(d2, d, s3);
    s4 = fma(d2, d2, s4);
    ++n;
  }

  template <int N>
  __device__ __forceinline__ void add_group(const float (&x)[N]) {
    T g1 = T(0), g2 = T(0);
#pragma unroll
    for (int u = 0; u < N; ++u) {
      const T d = T(x[u]) - shift;
      const T d2 = d * d;
      g1 += d;
      g2 += d2;
      s3 = fma(d2, d, s3);
      s4 = fma(d2, d2, s4);
    }
    add_to_sums(g1, g2);
    n += N;
  }

  // Central sums from the shifted ones (binomial expansion around the thread's own mean);
  // the state's mean is relative to the shift.
  __device__ __forceinline__ MomentState<T> state() const {
    if (n == 0) return empty_state<T>();
    const T m = s1 / T(n), m2 = m * m;
    MomentState<T> r;
    r.n = n;
    r.mean = m;
    r.m2 = s2 - s1 * m;
    if (!(r.m2 > T(0))) r.m2 = r.m2 == r.m2 ? T(0) : r.m2;  // rounding below zero; NaN stays
    r.m3 = s3 - T(3) * m * s2 + T(2) * m2 * s1;
    r.m4 = s4 - T(4) * m * s3 + T(6) * m2 * s2 - T(3) * m2 * m * s1;
    return r;
  }
};

template <class T>
__device__ __forceinline__ MomentState<T> shuffle_down(const MomentState<T>& s, int offset) {
  MomentState<T> r;
  r.n = __shfl_down_sync(0xffffffffu, s.n, offset);
  r.mean = __shfl_down_sync(0xffffffffu, s.mean, offset);
  r.m2 = __shfl_down_sync(0xffffffffu, s.m2, offset);
  r.m3 = __shfl_down_sync(0xffffffffu, s.m3, offset);
  r.m4 = __shfl_down_sync(0xffffffffu, s.m4, offset);
  return r;
}

// Mean, variance, skewness and kurtosis of a column from its central sums, in fp64.
// Policy (docs/moments.md): no rows, a non-finite value anywhere in the column (NaN, Inf,
// or an overflow) -> all four NaN; M2 == 0 (constant column) -> skewness and kurtosis NaN,
// as SciPy returns; estimators with too few rows (n-1, n-2, n-3 <= 0) -> NaN.
__device__ __forceinline__ void finalize_moments(long long n_, double mean, double m2, double m3, double m4,
                                                 MomentEstimator e, double* out_mean, double* out_var, double* out_skew,
                                                 double* out_kurt) {
  const double nan = __longlong_as_double(0x7ff8000000000000LL);
  if (n_ == 0 || !isfinite(mean) || !isfinite(m2) || !isfinite(m3) || !isfinite(m4)) {
    *out_mean = *out_var = *out_skew = *out_kurt = nan;
    return;
  }
  const double n = double(n_);
  *out_mean = mean;
  *out_var = e.unbiased ? (n_ > 1 ? m2 / (n - 1) : nan) : m2 / n;
  if (!(m2 > 0)) {
    *out_skew = *out_kurt = nan;
    return;
  }
  const double g1 = sqrt(n) * m3 / (m2 * sqrt(m2));
  const double g2 = n * m4 / (m2 * m2) - 3.0;
  double skew = g1, kurt = g2;
  if (e.unbiased) {
    skew = n_ > 2 ? g1 * sqrt(n * (n - 1)) / (n - 2) : nan;
    kurt = n_ > 3 ? ((n + 1) * g2 + 6) * (n - 1) / ((n - 2) * (n - 3)) : nan;
  }
  *out_skew = skew;
  *out_kurt = e.fisher ? kurt : kurt + 3.0;
}

}  // namespace distancies
