// Per-dimension moments of an embedding model: what `distancies moments` prints.
#pragma once
#include <string>
#include <vector>

#include "harness/moments/oracle.hpp"
#include "runtime/model.hpp"

namespace distancies {

struct ModelMoments {
  ColumnMoments stats;  // one entry per dimension
  std::string device;   // "gpu" or "cpu"
  std::string variant;  // the GPU variant, or "cpu_oracle"
  MomentEstimator estimator;
  double ms = 0;                 // computing the moments (GPU: upload included)
  double mean_norm = 0;          // Euclidean norm of the mean vector
  std::vector<int> by_skewness;  // dimensions by decreasing |skewness| (NaN last)
};

// device: "gpu" (an error without one), "cpu" (the fp64 oracle), or "auto" (the GPU when
// there is one, else the CPU). variant: a moments_variants() name (row-major ones read the
// model in place). Throws Error on an empty model or an unknown variant.
ModelMoments model_moments(const Model& m, const std::string& device, const std::string& variant, MomentEstimator e);

}  // namespace distancies
