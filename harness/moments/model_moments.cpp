#include "harness/moments/model_moments.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "harness/moments/gpu_moments.hpp"
#include "runtime/device.hpp"
#include "runtime/error.hpp"

namespace distancies {

ModelMoments model_moments(const Model& m, const std::string& device, const std::string& variant, MomentEstimator e) {
  if (m.rows < 1 || m.dim < 1) throw Error("moments: the model has no vectors");
  const MatrixView view{m.vectors.data(), m.rows, m.dim, m.ld, false};
  if (device != "gpu" && device != "cpu" && device != "auto") throw Error("moments: unknown device '" + device + "'");
  const MomentsVariant& v = moments_variant(variant);  // an unknown name fails on every device
  const bool gpu = device == "gpu" || (device == "auto" && device_status().available);
  ModelMoments r;
  r.estimator = e;
  const auto t0 = std::chrono::steady_clock::now();
  if (gpu) {
    r.stats = run_moments(v, view, e);
    r.device = "gpu";
    r.variant = v.name;
  } else {
    r.stats = moments_oracle(view, e);
    r.device = "cpu";
    r.variant = "cpu_oracle";
  }
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  double sq = 0;
  for (double v : r.stats.mean) sq += v * v;
  r.mean_norm = std::sqrt(sq);
  r.by_skewness.resize(m.dim);
  std::iota(r.by_skewness.begin(), r.by_skewness.end(), 0);
  auto key = [&](int i) { return std::isnan(r.stats.skewness[i]) ? -1.0 : std::fabs(r.stats.skewness[i]); };
  std::stable_sort(r.by_skewness.begin(), r.by_skewness.end(), [&](int a, int b) { return key(a) > key(b); });
  return r;
}

}  // namespace distancies
