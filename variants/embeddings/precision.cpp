#include "variants/embeddings/precision.hpp"

#include <cmath>
#include <limits>

namespace distancies {

bool reduced_in_range(float query_norm, const NormRange& r) {
  if (!r.finite || !std::isfinite(query_norm) || !(query_norm > 0)) return false;
  if (!(r.min_norm > 0)) return false;
  if (std::isinf(r.min_norm)) return true;  // every row is zero: every path scores 0
  const double q = query_norm;
  return q * r.min_norm >= kGuardLow && q * r.max_norm <= kGuardHigh;
}

bool batch_query_in_range(float query_norm, const NormRange& r) {
  return reduced_in_range(query_norm, r) && reduced_in_range(1.0f, r) && query_norm >= kGuardLow &&
         query_norm <= 0x1p100;
}

float reduced_error_bound(Storage s, int dim, const float* query, float query_norm, float min_norm, float rho,
                          float correction) {
  // Unit roundoff of the storage format (round to nearest), and half of its smallest
  // subnormal spacing: the absolute error of values that underflow.
  const double u = s == Storage::F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  const double tiny = s == Storage::F16 ? std::ldexp(1.0, -25) : std::ldexp(1.0, -134);
  // fp32 accumulation of `dim` products (fma chain + butterfly), relative to sum |q_j x_j|.
  const double eps = std::ldexp(1.0, -24);
  const double gamma = (dim + 5) * eps / (1.0 - (dim + 5) * eps);
  double l1 = 0;
  for (int j = 0; j < dim; ++j) l1 += std::fabs(query[j]);
  const double den = min_norm > 0 ? double(query_norm) * min_norm : 0.0;
  const double underflow = den > 0 ? tiny * l1 / den : 0.0;
  // fp32 products (fmas) whose result is subnormal: absolute 2^-150 each, on both paths (an
  // addition with a subnormal result is exact); at most D * 2^-50 inside the range guard.
  const double flushed = den > 0 ? 2.0 * (dim + 5) * std::ldexp(1.0, -150) / den : 0.0;
  // Storage rounding (Cauchy-Schwarz: sum |q_j||x_j| <= |q||x|), the 16-bit path's
  // accumulation, the fp32 path's accumulation, and a few ulps for the divisions and roundings.
  if (s == Storage::I8) {
    // i8_scan_topk_kernel: the query split as q~ = s_q (hi + lo / 254), s_q = fl(m / 127), m =
    // max |q_j|, with |q_j - q~_j| <= s_q (1/508 + 2^-20) =: d; the row x~ = s_i c (c exact
    // integers), |x~| <= |x| + s_i sqrt(D) / 2 <= n (1 + sqrt(D) / 254). The sums of hi c and lo c
    // are exact integers; then q . x - q~ . x~ = q . (x - x~) + (q - q~) . x~, whose first term is
    // the row's own (key) bound and whose second is at most sqrt(D) d |x~|. The fp32 steps after
    // the sums (2 conversions, the division by 254, the addition, 2 products, the cosine's
    // division) are 8 roundings of at most sum |q~_j||x~_j| <= (|q| + sqrt(D) s_q)|x~|. Plus the
    // fp32 path's own accumulation and divisions, and the subnormal products.
    double m = 0;
    for (int j = 0; j < dim; ++j) m = std::fmax(m, std::fabs(double(query[j])));
    const double root = std::sqrt(static_cast<double>(dim));
    const double qn = query_norm;
    const double s_q = m / 127.0 * (1 + 2 * eps);
    const double grow = 1 + root / 254.0;
    const double split = root * s_q * (1.0 / 508 + std::ldexp(1.0, -20)) * grow / qn;
    const double steps = 8 * eps * (1 + root * s_q / qn) * grow * (1 + eps);
    // The centred copy holds y = x - |x| mu (|y| <= rho |x|): x~ is y~, and |y~| <= rho n (1 +
    // sqrt(D) / 254) scales the split's and the steps' terms; the fp32 path's own do not.
    // With the row corrections the dot is fma(w, c_i, dot): one more rounding of at most
    // sum |q~_j||y~_j| + |w c_i|, where |c_i| <= |mu|_1 s_i / 2 <= |mu|_1 rho n / 254.
    const double fma_step = correction > 0 ? steps / 8 + 2 * eps * double(correction) / 254 / qn : 0.0;
    const double i8 = (split + steps + fma_step) * rho + gamma + flushed + 16 * eps;
    return static_cast<float>(i8 * (1 + 1e-6));
  }
  // The copy's rounding and the 16-bit path's accumulation are of sum |q_j||y_j| <= rho |q||x|.
  const double r = rho;
  const double bound = u * (1 + gamma) * r + underflow + flushed + gamma * (1 + u) * (1 + r) + 16 * eps;
  return static_cast<float>(bound * (1 + 1e-6));
}

float i8_walk_fp32_bound(int dim, float min_norm) {
  const double stored_norm = 2.0 * (dim + 5) * std::ldexp(1.0, -24);
  return static_cast<float>((gemm_error_bound(GemmInput::F32, dim, min_norm) + stored_norm) * (1 + 1e-6));
}

bool i8_query_in_range(int dim, const float* query) {
  float m = 0;
  for (int j = 0; j < dim; ++j) m = std::fmax(m, std::fabs(query[j]));
  return m >= kI8SmallestMax && std::isfinite(m);
}

namespace {
// l1 / (2 |q|) with the margin: x_j / s_i is rounded before rint (relative 2^-24 of at most 127.5:
// < 2^-16 of a step) and the key's s_i * factor / n_i is rounded twice more: 2^-10 covers all of it.
float row_bound_factor_of(double l1, float query_norm) {
  return static_cast<float>(l1 / (2.0 * query_norm) * (1 + std::ldexp(1.0, -10)));
}
}  // namespace

float i8_row_bound_factor(int dim, const float* query, float query_norm) {
  double l1 = 0;
  for (int j = 0; j < dim; ++j) l1 += std::fabs(double(query[j]));
  return row_bound_factor_of(l1, query_norm);
}

I8CentredBound i8_centred_bound(int dim, const float* query, float query_norm, const float* mean, float weight) {
  double l1 = 0, mean_l1 = 0;
  for (int j = 0; j < dim; ++j) {
    l1 += std::fabs(double(query[j]) - double(weight) * mean[j]);
    mean_l1 += std::fabs(double(mean[j]));
  }
  const double w = std::fabs(double(weight));
  // c_i's rounding: 2^-24 of |c_i| <= |mu|_1 s_i / 2, and 2^-50 for its fp64 sum: 2^-22 holds both.
  l1 += w * mean_l1 * std::ldexp(1.0, -22);
  return {row_bound_factor_of(l1, query_norm), static_cast<float>(w * mean_l1 * (1 + 0x1p-20))};
}

float centre_slack(float rho) {
  const double eps = std::ldexp(1.0, -24);
  return static_cast<float>(2.0 * 1.001 * (2.0 + static_cast<double>(rho)) * eps * (1 + 1e-6));
}

float with_centre_slack(float bound, float rho) { return (bound + centre_slack(rho)) * (1 + 0x1p-20f); }

float gemm_error_bound(GemmInput g, int dim, float min_norm, Storage scores, float rho) {
  if (!(min_norm > 0)) return std::numeric_limits<float>::infinity();
  const double eps = std::ldexp(1.0, -24);
  // Operand rounding: RN to bf16 / fp16 in our conversions; TF32 read by the tensor cores is
  // taken as truncation (2^-10) since cuBLAS does not promise round-to-nearest.
  const double u = g == GemmInput::BF16   ? std::ldexp(1.0, -8)
                   : g == GemmInput::F16  ? std::ldexp(1.0, -11)
                   : g == GemmInput::TF32 ? std::ldexp(1.0, -10)
                                          : 0.0;
  // Normalising the query: norm (rounded from fp64), reciprocal, product.
  const double theta = 4 * eps;
  // Accumulation: every addition (and, for SGEMM, every product) within 2^-23 relative (room
  // for truncating tensor-core adders), twice over for the adders' internal alignment.
  const double a = 2.0 * (dim + 2) * 2 * eps;
  const double acc = a / (1 - a);
  const double gemm = (1 + theta) * (1 + u) * (1 + u) * (1 + acc) - 1;  // times sum |q_j||x_j| <= |x|
  // Operands below the format's normal range keep an absolute accuracy only: half the
  // smallest subnormal spacing for round to nearest (fp16 2^-25, bf16 2^-134), the whole
  // spacing for TF32's truncation (it keeps 10 mantissa bits of an fp32 subnormal, so below
  // 2^-136 a value becomes 0, as 2^-140 does on Hopper). The normalised query's q_j / |q| can
  // itself be an fp32 subnormal (2^-150).
  const double tiny_x = g == GemmInput::F16    ? std::ldexp(1.0, -25)
                        : g == GemmInput::BF16 ? std::ldexp(1.0, -134)
                        : g == GemmInput::TF32 ? std::ldexp(1.0, -136)
                                               : 0.0;
  const double tiny_q = std::fmax(tiny_x, std::ldexp(1.0, -150));
  const double inv_min = std::isinf(min_norm) ? 0.0 : 1 / static_cast<double>(min_norm);
  const double sqrt_d = std::sqrt(static_cast<double>(dim));
  const double underflow = sqrt_d * (tiny_q + tiny_x * inv_min);
  // What the GEMM may flush to zero (cuBLAS promises nothing about subnormals): an operand
  // below 2^-126 (absolute 2^-126 per element, x sqrt(D) by Cauchy-Schwarz, for the query and
  // for the row over |x| >= min_norm), and a product or partial sum below 2^-126 (2 (D + 2) of
  // them, over min_norm); plus the fp32 scan's own subnormal products, D * 2^-50 inside the
  // guard (|q| * min_norm >= 2^-100). All negligible inside the guard.
  const double ftz = std::ldexp(1.0, -126);
  const double flushed =
      sqrt_d * ftz * (1 + inv_min) + 2.0 * (dim + 2) * ftz * inv_min + 2.0 * (dim + 5) * std::ldexp(1.0, -50);
  // Scaling by the row's 1 / |x| (reciprocal and product).
  const double scale = 3 * eps;
  // The fp32 scan's own error (the same terms reduced_error_bound counts).
  const double gamma = (dim + 5) * eps / (1.0 - (dim + 5) * eps);
  // fp16 scores: |score| <= |x| (1 + gemm) rounded to nearest, absolute 2^-25 below 2^-14.
  // Centred rows: the operands' products and the scores are within rho of the plain ones' size.
  const double r = rho;
  const double stored =
      scores == Storage::F16 ? std::ldexp(1.0, -11) * r * (1 + gemm) + std::ldexp(1.0, -25) * inv_min : 0.0;
  const double bound = gemm * r + underflow + flushed + stored + scale + gamma + 16 * eps;
  return static_cast<float>(bound * (1 + 1e-6));
}

}  // namespace distancies
