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

float gemm_error_bound(GemmInput g, int dim, float min_norm, Storage scores) {
  const double eps = std::ldexp(1.0, -24);
  // Operand rounding: RN to bf16 / fp16 in our conversions; TF32 read by the tensor cores is
  // taken as truncation (2^-10) since cuBLAS does not promise round-to-nearest.
  const double u = g == GemmInput::BF16 ? std::ldexp(1.0, -8)
                   : g == GemmInput::F16 ? std::ldexp(1.0, -11)
                   : g == GemmInput::TF32 ? std::ldexp(1.0, -10)
                                          : 0.0;
  // Normalising the query: norm (rounded from fp64), reciprocal, product.
  const double theta = 4 * eps;
  // Accumulation: every addition (and, for SGEMM, every product) within 2^-23 relative (room
  // for truncating tensor-core adders), twice over for the adders' internal alignment.
  const double a = 2.0 * (dim + 2) * 2 * eps;
  const double acc = a / (1 - a);
  const double gemm = (1 + theta) * (1 + u) * (1 + u) * (1 + acc) - 1;  // times sum |q_j||x_j| <= |x|
  // fp16 underflow: values under 2^-14 keep absolute accuracy 2^-25 only.
  const double tiny = g == GemmInput::F16 ? std::ldexp(1.0, -25) : g == GemmInput::BF16 ? std::ldexp(1.0, -134) : 0.0;
  const double sqrt_d = std::sqrt(static_cast<double>(dim));
  const double underflow = tiny * sqrt_d * (1 + (min_norm > 0 ? 1 / static_cast<double>(min_norm) : 0.0));
  // Scaling by the row's 1 / |x| (reciprocal and product).
  const double scale = 3 * eps;
  // The fp32 scan's own error (the same terms reduced_error_bound counts).
  const double gamma = (dim + 5) * eps / (1.0 - (dim + 5) * eps);
  // fp16 scores: |score| <= |x| (1 + gemm) rounded to nearest, absolute 2^-25 below 2^-14.
  const double inv_min = min_norm > 0 ? 1 / static_cast<double>(min_norm) : 0.0;
  const double stored = scores == Storage::F16 ? std::ldexp(1.0, -11) * (1 + gemm) + std::ldexp(1.0, -25) * inv_min : 0.0;
  const double bound = gemm + underflow + stored + scale + gamma + 16 * eps;
  return static_cast<float>(bound * (1 + 1e-6));
}

}  // namespace distancies
