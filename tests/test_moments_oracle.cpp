// The CPU side of the moments study: the fp64 oracle's formulas, estimators and policies,
// the error measure, and the benchmark matrix generator (no GPU needed).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/moments/oracle.hpp"
#include "tests/moments_test_data.hpp"

namespace distancies {
namespace {

MatrixView row_major(const std::vector<float>& x, long long rows, int cols) {
  return {x.data(), rows, cols, cols, false};
}

// Expected values from NumPy (x.mean(), x.var(ddof=0/1)) and SciPy's formulas
// (skew/kurtosis with bias=True/False) for [1, 2, 3, 4, 10].
TEST(MomentsOracle, MatchesScipyOnASmallColumn) {
  const std::vector<float> x = {1, 2, 3, 4, 10};
  const MatrixView m = row_major(x, 5, 1);
  ColumnMoments b = moments_oracle(m, {false, true});
  EXPECT_DOUBLE_EQ(b.mean[0], 4.0);
  EXPECT_NEAR(b.variance[0], 10.0, 1e-13);
  EXPECT_NEAR(b.skewness[0], 1.1384199576606167, 1e-13);
  EXPECT_NEAR(b.kurtosis[0], -0.21199999999999974, 1e-13);
  ColumnMoments u = moments_oracle(m, {true, true});
  EXPECT_NEAR(u.variance[0], 12.5, 1e-13);
  EXPECT_NEAR(u.skewness[0], 1.6970562748477143, 1e-13);
  EXPECT_NEAR(u.kurtosis[0], 3.152000000000001, 1e-13);
  ColumnMoments p = moments_oracle(m, {true, false});  // Pearson = Fisher + 3
  EXPECT_NEAR(p.kurtosis[0], 6.152000000000001, 1e-13);
  EXPECT_EQ(estimator_name({true, false}), "unbiased, Pearson");
}

// Integers k in [-1, 3] on top of 1e6 are exact floats: the exact moments follow from
// integer sums, and the oracle must reproduce them despite the offset.
TEST(MomentsOracle, ExactOnALargeOffset) {
  const long long n = 10007;
  std::vector<float> x(n);
  long double s[5] = {0, 0, 0, 0, 0};
  std::vector<int> k(n);
  for (long long r = 0; r < n; ++r) {
    k[r] = static_cast<int>(splitmix64(r) % 5) - 1 + (r % 7 == 0 ? 2 : 0);
    x[r] = static_cast<float>(1e6 + k[r]);
    s[1] += k[r];
  }
  const long double mk = s[1] / n;
  for (int v : k) {
    const long double d = v - mk;
    s[2] += d * d;
    s[3] += d * d * d;
    s[4] += d * d * d * d;
  }
  const ColumnMoments o = moments_oracle(row_major(x, n, 1), {false, true});
  EXPECT_NEAR(o.mean[0], 1e6 + double(mk), 1e-9);
  EXPECT_NEAR(o.variance[0], double(s[2] / n), 1e-12);
  const double g1 = double((s[3] / n) / std::pow(s[2] / n, 1.5L)), g2 = double((s[4] / n) / std::pow(s[2] / n, 2) - 3);
  EXPECT_NEAR(o.skewness[0], g1, 1e-11);
  EXPECT_NEAR(o.kurtosis[0], g2, 1e-11);
  // The textbook float formula loses the variance entirely at this offset.
  const MomentErrors naive = moment_errors(naive_power_sums(row_major(x, n, 1), {false, true}), o);
  EXPECT_GT(naive.variance, 1e-2);
}

TEST(MomentsOracle, PoliciesForConstantNonFiniteAndOneRow) {
  const long long rows = 37;
  const std::vector<float> x = test::nasty_matrix(rows);
  const ColumnMoments o = moments_oracle(row_major(x, rows, 6), {false, true});
  for (int c : {0, 5}) {  // constant: variance exactly 0, skewness and kurtosis NaN (SciPy's)
    EXPECT_EQ(o.variance[c], 0.0) << c;
    EXPECT_TRUE(std::isnan(o.skewness[c]) && std::isnan(o.kurtosis[c])) << c;
  }
  EXPECT_EQ(o.mean[0], double(0.1f));
  for (int c : {1, 2, 3}) {  // any NaN or Inf: all four NaN
    EXPECT_TRUE(std::isnan(o.mean[c]) && std::isnan(o.variance[c]) && std::isnan(o.skewness[c]) &&
                std::isnan(o.kurtosis[c]))
        << c;
  }
  EXPECT_TRUE(std::isfinite(o.skewness[4]) && o.variance[4] > 0);
  // One row: biased variance 0 (skewness, kurtosis NaN); unbiased variance NaN.
  const std::vector<float> one = {2.5f, -1.0f};
  const ColumnMoments b = moments_oracle(row_major(one, 1, 2), {false, true});
  const ColumnMoments u = moments_oracle(row_major(one, 1, 2), {true, true});
  EXPECT_EQ(b.mean[0], 2.5);
  EXPECT_EQ(b.variance[1], 0.0);
  EXPECT_TRUE(std::isnan(b.skewness[0]) && std::isnan(u.variance[0]));
  // Unbiased skewness needs 3 rows, kurtosis 4.
  const std::vector<float> three = {1, 2, 4};
  const ColumnMoments t = moments_oracle(row_major(three, 3, 1), {true, true});
  EXPECT_TRUE(std::isfinite(t.skewness[0]));
  EXPECT_TRUE(std::isnan(t.kurtosis[0]));
}

TEST(MomentsOracle, LayoutsAndLeadingDimensionsAgree) {
  const long long rows = 101;
  const int cols = 7;
  const std::vector<float> x = moments_matrix(5, rows, cols);
  std::vector<float> padded(rows * 9, -1e30f), colmajor(rows * cols);
  for (long long r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      padded[r * 9 + c] = x[r * cols + c];
      colmajor[c * rows + r] = x[r * cols + c];
    }
  const ColumnMoments a = moments_oracle(row_major(x, rows, cols), {});
  const ColumnMoments b = moments_oracle({padded.data(), rows, cols, 9, false}, {});
  const ColumnMoments c = moments_oracle({colmajor.data(), rows, cols, rows, true}, {});
  const MomentErrors eb = moment_errors(b, a), ec = moment_errors(c, a);
  EXPECT_EQ(eb.mean + eb.variance + eb.skewness + eb.kurtosis, 0.0);
  EXPECT_EQ(ec.mean + ec.variance + ec.skewness + ec.kurtosis, 0.0);
  // The benchmark matrix is skewed and not normal: u^2 has g1 ~ 0.64, g2 ~ -0.86.
  const std::vector<float> big = moments_matrix(1, 200000, 1);
  const ColumnMoments s = moments_oracle(row_major(big, 200000, 1), {});
  EXPECT_NEAR(s.mean[0], 1.0 / 3, 5e-3);
  EXPECT_NEAR(s.skewness[0], 0.639, 2e-2);
  EXPECT_NEAR(s.kurtosis[0], -0.857, 2e-2);
}

TEST(MomentsOracle, ErrorMeasure) {
  ColumnMoments want(2), got(2);
  want.mean = {100, 0};
  want.variance = {4, 1};
  want.skewness = {0.5, 2};
  want.kurtosis = {NAN, -1};
  got = want;
  got.mean[1] = 0.5;       // scaled by sd = 1
  got.skewness[0] = 0.75;  // |0.25| / max(0.5, 1)
  got.variance[0] = 5;     // relative: 0.25
  MomentErrors e = moment_errors(got, want);
  EXPECT_DOUBLE_EQ(e.mean, 0.5);
  EXPECT_DOUBLE_EQ(e.skewness, 0.25);
  EXPECT_DOUBLE_EQ(e.variance, 0.25);
  EXPECT_EQ(e.kurtosis, 0.0);  // NaN on both sides agrees
  got.kurtosis[0] = 1;
  EXPECT_TRUE(std::isinf(moment_errors(got, want).kurtosis));
}

// The same floats as scripts/peers/peer_moments.py's generator (values printed by that code).
TEST(MomentsData, GeneratorMatchesThePythonPeers) {
  EXPECT_EQ(moments_element(1, 0, 0, 3), 0.01549344789236784f);
  EXPECT_EQ(moments_element(1, 2, 1, 3), 0.5236557722091675f);
  EXPECT_EQ(moments_element(42, 12345, 7, 300), 0.26222479343414307f);
  const std::vector<float> m = moments_matrix(1, 3, 3);
  EXPECT_EQ(m[2 * 3 + 1], moments_element(1, 2, 1, 3));
}

}  // namespace
}  // namespace distancies
