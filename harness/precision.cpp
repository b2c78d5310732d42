#include "harness/precision.hpp"

#include <cmath>

namespace distancies {

float reduced_error_bound(Storage s, int dim, const float* query, float query_norm, float min_norm) {
  // Unit roundoff of the storage format (round to nearest), and half of its smallest
  // subnormal spacing: the absolute error of values that underflow.
  const double u = s == Storage::F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  const double tiny = s == Storage::F16 ? std::ldexp(1.0, -25) : std::ldexp(1.0, -134);
  // fp32 accumulation of `dim` products (fma chain + butterfly), relative to sum |q_j x_j|.
  const double eps = std::ldexp(1.0, -24);
  const double gamma = (dim + 5) * eps / (1.0 - (dim + 5) * eps);
  double l1 = 0;
  for (int j = 0; j < dim; ++j) l1 += std::fabs(query[j]);
  const double underflow = min_norm > 0 ? tiny * l1 / (double(query_norm) * min_norm) : 0.0;
  // Storage rounding (Cauchy-Schwarz: sum |q_j||x_j| <= |q||x|), the 16-bit path's
  // accumulation, the fp32 path's accumulation, and a few ulps for the divisions and roundings.
  const double bound = u * (1 + gamma) + underflow + 2 * gamma * (1 + u) + 16 * eps;
  return static_cast<float>(bound * (1 + 1e-6));
}

}  // namespace distancies
