#include "harness/matmul/matmul_host.hpp"

#include <cmath>
#include <cstddef>

namespace distancies {

void cpu_matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0.0f;
      for (int p = 0; p < k; ++p) s += a[static_cast<std::size_t>(i) * k + p] * b[static_cast<std::size_t>(p) * n + j];
      c[static_cast<std::size_t>(i) * n + j] = s;
    }
}

Fp64Product fp64_matmul(const float* a, const float* b, int m, int n, int k) {
  Fp64Product r;
  r.c.assign(static_cast<std::size_t>(m) * n, 0.0);
  r.abs_c.assign(static_cast<std::size_t>(m) * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int p = 0; p < k; ++p) {
      const double x = a[static_cast<std::size_t>(i) * k + p];
      const float* brow = b + static_cast<std::size_t>(p) * n;
      double* crow = r.c.data() + static_cast<std::size_t>(i) * n;
      double* arow = r.abs_c.data() + static_cast<std::size_t>(i) * n;
      for (int j = 0; j < n; ++j) {
        crow[j] += x * brow[j];
        arow[j] += std::fabs(x * brow[j]);
      }
    }
  return r;
}

double matmul_error_factor(MatmulPrecision p, int k) {
  const double u = std::ldexp(1.0, -24);
  const double gamma = k * u / (1.0 - k * u);
  if (p == MatmulPrecision::F32) return gamma;
  const double ur = std::ldexp(1.0, -11);  // TF32 and FP16 both keep 10 explicit mantissa bits
  return 2 * ur + ur * ur + gamma;
}

std::vector<float> random_matrix(int rows, int cols, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(rows) * cols);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float& f : v) {
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;  // xorshift64*
    const std::uint64_t r = x * 0x2545F4914F6CDD1Dull;
    f = static_cast<float>(static_cast<double>(r >> 40) / double(1ull << 24) * 2.0 - 1.0);
  }
  return v;
}

}  // namespace distancies
