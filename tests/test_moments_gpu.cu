// Every moments variant against the fp64 oracle on the GPU: shapes from one row and one
// column to wide tiles, padded rows, every estimator, the offset case, constant and
// non-finite columns. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "harness/moments/gpu_moments.hpp"
#include "harness/moments/oracle.hpp"
#include "tests/gpu_skip.hpp"
#include "tests/moments_test_data.hpp"
#include "variants/moments/launch.hpp"

namespace distancies {
namespace {

// The study's goals for fp32 input (docs/moments.md): 1e-6 for mean and variance, 1e-4 for
// skewness and kurtosis.
void expect_close(const MomentErrors& e, const std::string& what, double mv = 1e-6, double sk = 1e-4) {
  EXPECT_LE(e.mean, mv) << what;
  EXPECT_LE(e.variance, mv) << what;
  EXPECT_LE(e.skewness, sk) << what;
  EXPECT_LE(e.kurtosis, sk) << what;
}

MatrixView view(const std::vector<float>& x, long long rows, int cols) { return {x.data(), rows, cols, cols, false}; }

class EveryVariant : public ::testing::TestWithParam<std::string> {
 protected:
  const MomentsVariant& v() const { return moments_variant(GetParam()); }
  // The uncorrected seed variant is exact only where the fp32 mean is; it is held to the
  // goals on data with a mean near 0 only.
  bool corrected() const { return GetParam() != "two_pass_uncorrected"; }
};

TEST_P(EveryVariant, MatchesTheOracleOnEveryShape) {
  DISTANCIES_REQUIRE_GPU();
  // Rows not a multiple of any block; columns around the warp, the study's 300, tiles.
  const std::vector<std::pair<long long, int>> shapes = {
      {1, 1},     {1, 300},   {2, 2},      {5, 3},      {1000, 1},  {1001, 2}, {777, 8},    {1025, 31},
      {4097, 32}, {3001, 33}, {2049, 300}, {513, 1024}, {65, 4096}, {3, 5000}, {100003, 7}, {40000, 1500}};
  for (const auto& [rows, cols] : shapes) {
    std::vector<float> x = moments_matrix(11, rows, cols);
    for (float& f : x) f -= 1.0f / 3;  // mean near 0: fair to the uncorrected variant
    for (MomentEstimator e : {MomentEstimator{false, true}, MomentEstimator{true, false}}) {
      const ColumnMoments want = moments_oracle(view(x, rows, cols), e);
      const ColumnMoments got = run_moments(v(), view(x, rows, cols), e);
      expect_close(moment_errors(got, want), v().name + std::string(" ") + std::to_string(rows) + "x" +
                                                 std::to_string(cols) + " " + estimator_name(e));
    }
  }
}

TEST_P(EveryVariant, ReadsPaddedRows) {
  DISTANCIES_REQUIRE_GPU();
  const long long rows = 3333;
  // A model's rows: 50 floats padded to 52, and 48 padded to 52 (rows whose columns and
  // padding are whole 16-byte steps); the padding, 1e30 here, must never be read.
  for (const auto& [cols, ld] : {std::pair<int, int>{50, 52}, std::pair<int, int>{48, 52}}) {
    std::vector<float> x(rows * ld, 1e30f);
    const std::vector<float> packed = moments_matrix(2, rows, cols);
    for (long long r = 0; r < rows; ++r)
      for (int c = 0; c < cols; ++c) x[r * ld + c] = packed[r * cols + c] - 0.25f;
    const MatrixView m{x.data(), rows, cols, ld, false};
    expect_close(moment_errors(run_moments(v(), m, {}), moments_oracle(m, {})),
                 std::string(v().name) + " cols " + std::to_string(cols) + " ld " + std::to_string(ld));
  }
}

TEST_P(EveryVariant, LargeOffsetKeepsItsDigits) {
  DISTANCIES_REQUIRE_GPU();
  const long long rows = 200001;
  const int cols = 16;
  const std::vector<float> x = test::offset_matrix(rows, cols);
  const ColumnMoments want = moments_oracle(view(x, rows, cols), {});
  const MomentErrors e = moment_errors(run_moments(v(), view(x, rows, cols), {}), want);
  const MomentErrors naive = moment_errors(naive_power_sums(view(x, rows, cols), {}), want);
  std::printf("%s offset 1e6: mean %.2e var %.2e skew %.2e kurt %.2e (naive float sums: var %.2e)\n", v().name, e.mean,
              e.variance, e.skewness, e.kurtosis, naive.variance);
  if (corrected()) {
    expect_close(e, v().name);
    EXPECT_GT(naive.variance, 1e3 * std::max(e.variance, 1e-12)) << "no better than the textbook formula";
  }
}

TEST_P(EveryVariant, ConstantNonFiniteAndOneRowColumnsFollowThePolicy) {
  DISTANCIES_REQUIRE_GPU();
  for (long long rows : {1LL, 2LL, 37LL, 5000LL}) {
    const std::vector<float> x = test::nasty_matrix(rows);
    for (MomentEstimator e : {MomentEstimator{false, true}, MomentEstimator{true, true}}) {
      const ColumnMoments want = moments_oracle(view(x, rows, 6), e);
      const ColumnMoments got = run_moments(v(), view(x, rows, 6), e);
      for (int c = 0; c < 6; ++c) {
        const std::string what = v().name + std::string(" rows ") + std::to_string(rows) + " col " + std::to_string(c);
        // NaN exactly where the oracle has NaN (moment_errors counts a one-sided NaN as inf).
        EXPECT_EQ(std::isnan(got.skewness[c]), std::isnan(want.skewness[c])) << what;
        EXPECT_EQ(std::isnan(got.mean[c]), std::isnan(want.mean[c])) << what;
        EXPECT_EQ(std::isnan(got.variance[c]), std::isnan(want.variance[c])) << what;
        if ((c == 0 || c == 5) && !std::isnan(want.variance[c]))
          EXPECT_EQ(got.variance[c], want.variance[c]) << what;  // constant: exactly 0
      }
      expect_close(moment_errors(got, want), std::string(v().name) + " nasty");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Moments, EveryVariant, ::testing::ValuesIn([] {
                           std::vector<std::string> names;
                           for (const MomentsVariant& v : moments_variants()) names.push_back(v.name);
                           return names;
                         }()),
                         [](const auto& info) { return info.param; });

// Every error goal at the study's headline shapes: 2^28 elements (1 GiB) of the benchmark
// matrix (seed 1, as the fixtures fill it) at 300 and 4,096 columns, every corrected variant,
// the default estimator, against the fp64 oracle. Goals: mean and variance <= 1e-6, skewness
// and kurtosis <= 1e-4 (relative, as moment_errors measures them).
TEST(MomentsHeadline, EveryGoalAtTwoTo28Elements) {
  DISTANCIES_REQUIRE_GPU();
  for (int cols : {300, 4096}) {
    const long long rows = ((1LL << 28) + cols - 1) / cols;
    const std::vector<float> x = moments_matrix(1, rows, cols);
    const ColumnMoments want = moments_oracle(view(x, rows, cols), {});
    for (const MomentsVariant& v : moments_variants()) {
      if (std::string(v.name) == "two_pass_uncorrected") continue;  // held to the goals near mean 0 only
      const MomentErrors e = moment_errors(run_moments(v, view(x, rows, cols), {}), want);
      std::printf("%s %lld x %d: mean %.2e var %.2e skew %.2e kurt %.2e\n", v.name, rows, cols, e.mean, e.variance,
                  e.skewness, e.kurtosis);
      expect_close(e, std::string(v.name) + " " + std::to_string(rows) + "x" + std::to_string(cols));
    }
  }
}

// The study's claim: the correction term cancels the error of an inexact mean.
TEST(MomentsCorrection, RemovesTheInexactMeanError) {
  DISTANCIES_REQUIRE_GPU();
  const long long rows = 200001;
  const int cols = 16;
  const std::vector<float> x = test::offset_matrix(rows, cols);
  const ColumnMoments want = moments_oracle(view(x, rows, cols), {});
  const MomentErrors with = moment_errors(run_moments(moments_variant("two_pass"), view(x, rows, cols), {}), want);
  const MomentErrors without =
      moment_errors(run_moments(moments_variant("two_pass_uncorrected"), view(x, rows, cols), {}), want);
  std::printf("offset 1e6, two-pass: with the correction var %.2e skew %.2e; without var %.2e skew %.2e\n",
              with.variance, with.skewness, without.variance, without.skewness);
  EXPECT_GT(without.skewness, 100 * std::max(with.skewness, 1e-9));
  EXPECT_GT(without.variance, 100 * std::max(with.variance, 1e-12));
}

TEST(MomentsVariants, UnknownNameListsTheKnownOnes) {
  try {
    moments_variant("nope");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known: two_pass"), std::string::npos) << e.what();
  }
}

TEST(MomentsVariants, GeometryCoversEveryColumnAndNoMoreThreads) {
  DISTANCIES_REQUIRE_GPU();
  for (int cols : {1, 2, 8, 31, 32, 33, 300, 1024, 1025, 4096, 5000}) {
    for (long long rows : {1LL, 3LL, 1000000LL}) {
      const MomentsGeometry g = moments_geometry(rows, cols, MatrixLayout::RowMajor);
      EXPECT_GE(static_cast<long long>(g.tiles) * g.width, cols);
      EXPECT_LE(g.threads, 1024);
      EXPECT_LE(g.width * g.slots, g.threads);
      EXPECT_GE(g.groups, 1);
      EXPECT_LE(static_cast<long long>(g.groups - 1) * g.slots, rows);  // no group without rows
    }
  }
}

}  // namespace
}  // namespace distancies
