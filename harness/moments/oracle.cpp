#include "harness/moments/oracle.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/moments/moments_data.cuh"

namespace distancies {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Neumaier's compensated sum: the running error of every addition is kept and added back.
struct Neumaier {
  double sum = 0, comp = 0;
  void add(double v) {
    const double t = sum + v;
    comp += std::fabs(sum) >= std::fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  double value() const { return sum + comp; }
};

// The estimators, written independently of the GPU's finalize_moments.
void finish(ColumnMoments& out, std::size_t c, double n, double mean, double m2, double m3, double m4,
            MomentEstimator e) {
  out.mean[c] = mean;
  out.variance[c] = e.unbiased ? (n > 1 ? m2 / (n - 1) : kNaN) : m2 / n;
  if (m2 <= 0) {
    out.skewness[c] = out.kurtosis[c] = kNaN;
    return;
  }
  const double var_b = m2 / n;
  const double g1 = (m3 / n) / std::pow(var_b, 1.5);
  const double g2 = (m4 / n) / (var_b * var_b) - 3.0;
  double skew = g1, kurt = g2;
  if (e.unbiased) {
    skew = n > 2 ? std::sqrt(n * (n - 1)) / (n - 2) * g1 : kNaN;
    kurt = n > 3 ? (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * g2 + 6) : kNaN;
  }
  out.skewness[c] = skew;
  out.kurtosis[c] = e.fisher ? kurt : kurt + 3.0;
}

void all_nan(ColumnMoments& out, std::size_t c) {
  out.mean[c] = out.variance[c] = out.skewness[c] = out.kurtosis[c] = kNaN;
}

}  // namespace

std::string estimator_name(MomentEstimator e) {
  return std::string(e.unbiased ? "unbiased" : "biased") + ", " + (e.fisher ? "Fisher" : "Pearson");
}

std::string estimator_scipy(MomentEstimator e) {
  return std::string("scipy.stats.skew/kurtosis(bias=") + (e.unbiased ? "False" : "True") +
         ", fisher=" + (e.fisher ? "True" : "False") + "), numpy var(ddof=" + (e.unbiased ? "1" : "0") + ")";
}

ColumnMoments moments_oracle(const MatrixView& m, MomentEstimator e) {
  const std::size_t cols = static_cast<std::size_t>(m.cols);
  ColumnMoments out(cols);
  if (m.rows < 1) {
    for (std::size_t c = 0; c < cols; ++c) all_nan(out, c);
    return out;
  }
  // Row by row with one accumulator per column, so a row-major matrix is read in order.
  std::vector<Neumaier> sum(cols);
  std::vector<float> lo(cols, std::numeric_limits<float>::infinity()),
      hi(cols, -std::numeric_limits<float>::infinity());
  std::vector<char> finite(cols, 1);
  for (long long r = 0; r < m.rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const float x = m.at(r, c);
      if (!std::isfinite(x)) finite[c] = 0;
      sum[c].add(x);
      lo[c] = std::min(lo[c], x);
      hi[c] = std::max(hi[c], x);
    }
  const double n = double(m.rows);
  std::vector<double> mean(cols);
  for (std::size_t c = 0; c < cols; ++c) mean[c] = sum[c].value() / n;
  std::vector<Neumaier> s1(cols), s2(cols), s3(cols), s4(cols);
  for (long long r = 0; r < m.rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      if (!finite[c]) continue;
      const double d = double(m.at(r, c)) - mean[c], d2 = d * d;
      s1[c].add(d);
      s2[c].add(d2);
      s3[c].add(d2 * d);
      s4[c].add(d2 * d2);
    }
  for (std::size_t c = 0; c < cols; ++c) {
    if (!finite[c]) {
      all_nan(out, c);
      continue;
    }
    if (lo[c] == hi[c]) {
      finish(out, c, n, double(lo[c]), 0, 0, 0, e);
      continue;
    }
    const double a = s1[c].value() / n, S2 = s2[c].value(), S3 = s3[c].value(), S4 = s4[c].value();
    const double m2 = S2 - a * s1[c].value();
    const double m3 = S3 - 3 * a * S2 + 2 * a * a * s1[c].value();
    const double m4 = S4 - 4 * a * S3 + 6 * a * a * S2 - 3 * a * a * a * s1[c].value();
    finish(out, c, n, mean[c] + a, m2, m3, m4, e);
  }
  return out;
}

ColumnMoments naive_power_sums(const MatrixView& m, MomentEstimator e) {
  const std::size_t cols = static_cast<std::size_t>(m.cols);
  ColumnMoments out(cols);
  std::vector<float> p1(cols), p2(cols), p3(cols), p4(cols);
  for (long long r = 0; r < m.rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const float x = m.at(r, c), x2 = x * x;
      p1[c] += x;
      p2[c] += x2;
      p3[c] += x2 * x;
      p4[c] += x2 * x2;
    }
  const double n = double(m.rows);
  for (std::size_t c = 0; c < cols; ++c) {
    // Raw moments to central ones, in float as a float implementation would.
    const float mu = p1[c] / float(n), e2 = p2[c] / float(n), e3 = p3[c] / float(n), e4 = p4[c] / float(n);
    const float c2 = e2 - mu * mu;
    const float c3 = e3 - 3 * mu * e2 + 2 * mu * mu * mu;
    const float c4 = e4 - 4 * mu * e3 + 6 * mu * mu * e2 - 3 * mu * mu * mu * mu;
    if (!std::isfinite(mu) || !std::isfinite(c2) || !std::isfinite(c3) || !std::isfinite(c4)) {
      all_nan(out, c);
      continue;
    }
    finish(out, c, n, mu, std::max(0.0, double(c2)) * n, double(c3) * n, double(c4) * n, e);
  }
  return out;
}

MomentErrors moment_errors(const ColumnMoments& got, const ColumnMoments& want) {
  MomentErrors err;
  const double inf = std::numeric_limits<double>::infinity();
  auto diff = [&](double g, double w, double scale) {
    if (std::isnan(g) || std::isnan(w)) return std::isnan(g) && std::isnan(w) ? 0.0 : inf;
    if (g == w) return 0.0;
    return std::fabs(g - w) / (scale > 0 ? scale : std::fabs(w) > 0 ? std::fabs(w) : 1.0);
  };
  const std::size_t cols = std::min(got.cols(), want.cols());
  if (got.cols() != want.cols()) err.mean = err.variance = err.skewness = err.kurtosis = inf;
  for (std::size_t c = 0; c < cols; ++c) {
    const double sd = std::isfinite(want.variance[c]) ? std::sqrt(std::max(0.0, want.variance[c])) : 0;
    err.mean = std::max(err.mean, diff(got.mean[c], want.mean[c], std::max(std::fabs(want.mean[c]), sd)));
    err.variance = std::max(err.variance, diff(got.variance[c], want.variance[c], std::fabs(want.variance[c])));
    err.skewness =
        std::max(err.skewness, diff(got.skewness[c], want.skewness[c], std::max(std::fabs(want.skewness[c]), 1.0)));
    err.kurtosis =
        std::max(err.kurtosis, diff(got.kurtosis[c], want.kurtosis[c], std::max(std::fabs(want.kurtosis[c]), 1.0)));
  }
  return err;
}

std::vector<float> moments_matrix(std::uint64_t seed, long long rows, int cols) {
  std::vector<float> x(static_cast<std::size_t>(rows) * cols);
  for (long long r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) x[static_cast<std::size_t>(r) * cols + c] = moments_element(seed, r, c, cols);
  return x;
}

}  // namespace distancies
