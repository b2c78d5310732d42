// The matmul study's host side: the study's CPU loop against the fp64 product within the fp32
// bound, and the bounds themselves (docs/matmul.md).
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "harness/matmul/matmul_host.hpp"

using namespace distancies;

TEST(MatmulHost, CpuLoopIsWithinTheFp32BoundOfTheFp64Product) {
  for (auto [m, n, k] : {std::array<int, 3>{1, 1, 1}, {3, 5, 7}, {33, 17, 65}, {64, 64, 300}, {7, 9, 1}}) {
    const auto a = random_matrix(m, k, 1), b = random_matrix(k, n, 2);
    std::vector<float> c(static_cast<std::size_t>(m) * n);
    cpu_matmul(a.data(), b.data(), c.data(), m, n, k);
    const Fp64Product ref = fp64_matmul(a.data(), b.data(), m, n, k);
    const double f = matmul_error_factor(MatmulPrecision::F32, k);
    double worst = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      ASSERT_LE(std::fabs(c[i] - ref.c[i]), f * ref.abs_c[i]) << m << "x" << n << "x" << k << " at " << i;
      if (ref.abs_c[i] > 0) worst = std::max(worst, std::fabs(c[i] - ref.c[i]) / (f * ref.abs_c[i]));
    }
    EXPECT_LT(worst, 1.0);
  }
}

TEST(MatmulHost, BoundsGrowWithKAndCoarserInputs) {
  EXPECT_DOUBLE_EQ(matmul_error_factor(MatmulPrecision::F32, 1), std::ldexp(1.0, -24) / (1 - std::ldexp(1.0, -24)));
  EXPECT_LT(matmul_error_factor(MatmulPrecision::F32, 512), matmul_error_factor(MatmulPrecision::F32, 4096));
  EXPECT_GT(matmul_error_factor(MatmulPrecision::TF32, 512), 2 * std::ldexp(1.0, -11));
  EXPECT_EQ(matmul_error_factor(MatmulPrecision::TF32, 99), matmul_error_factor(MatmulPrecision::F16, 99));
}

TEST(MatmulHost, RandomMatricesAreDeterministicAndInRange) {
  const auto x = random_matrix(10, 10, 5), y = random_matrix(10, 10, 5), z = random_matrix(10, 10, 6);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  for (float v : x) {
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
  }
}
