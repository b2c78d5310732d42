// What a column-moments launch reads and writes. Plain structs: host code includes them too.
#pragma once

namespace distancies {

// Which estimators the final formulas use (docs/moments.md, "Estimators").
//   unbiased = false: variance M2/n, skewness g1, kurtosis g2 (SciPy bias=True, NumPy ddof=0)
//   unbiased = true:  variance M2/(n-1), skewness G1, kurtosis G2 (SciPy bias=False)
//   fisher = true: excess kurtosis (normal = 0); false: Pearson's (normal = 3)
struct MomentEstimator {
  bool unbiased = false;
  bool fisher = true;
};

// A float32 matrix on the device. Row-major: element (r, c) at x[r * ld + c];
// column-major: at x[c * ld + r]. ld >= cols (row-major) or >= rows (column-major).
struct MomentsInput {
  const float* x = nullptr;
  long long rows = 0;
  int cols = 0;
  long long ld = 0;
  MomentEstimator estimator;
};

// Device arrays of `cols` doubles each.
struct MomentsOutput {
  double* mean = nullptr;
  double* variance = nullptr;
  double* skewness = nullptr;
  double* kurtosis = nullptr;
};

}  // namespace distancies
