// Column moments on the CPU: the fp64 two-pass reference with compensated sums that every
// GPU variant is checked against, the textbook sum-of-powers formula it is compared with,
// and the error measure the tests and fixtures report (docs/moments.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/moments/moments_args.cuh"

namespace distancies {

// A float32 matrix in host memory; element (r, c) at x[r * ld + c] (row-major) or
// x[c * ld + r] (column-major).
struct MatrixView {
  const float* x = nullptr;
  long long rows = 0;
  int cols = 0;
  long long ld = 0;
  bool col_major = false;
  float at(long long r, long long c) const { return col_major ? x[c * ld + r] : x[r * ld + c]; }
};

struct ColumnMoments {
  std::vector<double> mean, variance, skewness, kurtosis;
  explicit ColumnMoments(std::size_t cols = 0) : mean(cols), variance(cols), skewness(cols), kurtosis(cols) {}
  std::size_t cols() const { return mean.size(); }
};

// "biased, Fisher" etc., and the SciPy call that computes the same.
std::string estimator_name(MomentEstimator e);
std::string estimator_scipy(MomentEstimator e);

// The reference: per column, an exact-as-fp64 mean (Neumaier sum), then the central sums of
// d = x - mean (Neumaier) with the binomial correction for what rounding is left in the mean.
// Policy as on the GPU: a non-finite value makes the column all NaN; min == max makes it
// constant (variance 0, skewness and kurtosis NaN).
ColumnMoments moments_oracle(const MatrixView& m, MomentEstimator e);

// The textbook one-pass formula from float sums of x, x^2, x^3, x^4: what the offset case
// breaks (a mean of 1e6 leaves no digit of a variance of 1).
ColumnMoments naive_power_sums(const MatrixView& m, MomentEstimator e);

// Largest error over the columns, per statistic, with scales that stay meaningful near 0:
//   mean: |got - want| / max(|want|, sd); variance: relative;
//   skewness, kurtosis (dimensionless): |got - want| / max(|want|, 1).
// Both NaN counts as equal; NaN on one side only is +inf.
struct MomentErrors {
  double mean = 0, variance = 0, skewness = 0, kurtosis = 0;
};
MomentErrors moment_errors(const ColumnMoments& got, const ColumnMoments& want);

// The benchmark matrix of kernels/moments/moments_data.cuh, row-major, on the host.
std::vector<float> moments_matrix(std::uint64_t seed, long long rows, int cols);

}  // namespace distancies
