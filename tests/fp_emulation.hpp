// Bit-exact CPU emulation of the arithmetic of the search paths, for the precision tests:
// conversions to fp16 / bf16 (round to nearest even, subnormals, overflow to Inf), TF32
// truncation, and the fp32 fma chains and butterfly sums of the fused fp32 scan
// (kernels/embeddings/row_dot.cuh) and of the 16-bit scan (kernels/embeddings/reduced_scan_topk.cuh), in the
// kernels' order. Host float arithmetic is IEEE binary32 with subnormals (no FTZ), std::fmaf
// is the fused multiply-add, and the build does not contract a * b + c.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/embeddings/storage.hpp"

namespace distancies::emu {

// x rounded to nearest even with `mant` significand bits (hidden bit included), exponent at
// least emin (below it: subnormal spacing), Inf above `max` (as IEEE overflow does).
inline float round_to(float x, int mant, int emin, double max) {
  if (!std::isfinite(x) || x == 0) return x;
  int e;
  std::frexp(static_cast<double>(x), &e);  // |x| in [2^(e-1), 2^e)
  const int exp = std::max(e - 1, emin);
  const double spacing = std::ldexp(1.0, exp - (mant - 1));
  const double r = std::nearbyint(static_cast<double>(x) / spacing) * spacing;  // ties to even
  if (std::fabs(r) > max) return x > 0 ? INFINITY : -INFINITY;
  return static_cast<float>(r);
}
inline float round_f16(float x) { return round_to(x, 11, -14, 65504.0); }
inline float round_bf16(float x) { return round_to(x, 8, -126, 0x1.FEp127); }
// TF32 as the tensor cores read fp32: the low 13 mantissa bits dropped, subnormals included.
inline float truncate_tf32(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u &= 0xFFFFE000u;
  std::memcpy(&x, &u, 4);
  return x;
}
inline float round_storage(Storage s, float x) {
  return s == Storage::F16 ? round_f16(x) : s == Storage::BF16 ? round_bf16(x) : x;
}

// The study's division (cosine_from_dot): the norm product is rounded, then the quotient.
inline float cosine_from_dot(float dot, float qn, float rn) {
  if (!(rn > 0.0f)) return 0.0f;
  const float den = qn * rn;
  return dot / den;
}

// row_dot_f32: lane l takes float4 pieces l, l + 32, ... (fma chain over x, y, z, w), then a
// butterfly over 32 lanes; lane 0's total. `ld` = dim rounded up to 4, padding zero.
inline float fused_dot(const float* q, const float* x, int dim) {
  const int ld4 = (dim + 3) / 4;
  float acc[32];
  for (int l = 0; l < 32; ++l) {
    float a = 0.0f;
    for (int p = l; p < ld4; p += 32)
      for (int c = 0; c < 4; ++c) {
        const int j = 4 * p + c;
        a = std::fmaf(j < dim ? q[j] : 0.0f, j < dim ? x[j] : 0.0f, a);
      }
    acc[l] = a;
  }
  for (int off = 16; off > 0; off /= 2) {
    float next[32];
    for (int l = 0; l < 32; ++l) next[l] = acc[l] + acc[l ^ off];
    std::memcpy(acc, next, sizeof acc);
  }
  return acc[0];
}

// reduced_scan_topk_kernel: half a warp per row; lane h (0..15) takes the 8-element groups
// j0 + s * 16 + h for s < kSegs (3) of every round j0 = 0, 48, ..., an fma chain over the 8
// elements (converted exactly to fp32), then a butterfly over the 16 lanes; lane 0's total.
// `xr` holds the 16-bit values (already rounded, as floats).
inline float reduced_dot(const float* q, const float* xr, int dim) {
  constexpr int kSegs = 3;
  const int n8 = (dim + 7) / 8;
  float acc[16];
  for (int h = 0; h < 16; ++h) {
    float a = 0.0f;
    for (int j0 = 0; j0 < n8; j0 += 16 * kSegs)
      for (int s = 0; s < kSegs; ++s) {
        const int g = j0 + s * 16 + h;
        for (int c = 0; c < 8; ++c) {
          const int j = 8 * g + c;
          const bool in = g < n8 && j < dim;
          a = std::fmaf(in ? q[j] : 0.0f, in ? xr[j] : 0.0f, a);
        }
      }
    acc[h] = a;
  }
  for (int off = 8; off > 0; off /= 2) {
    float next[16];
    for (int l = 0; l < 16; ++l) next[l] = acc[l] + acc[l ^ off];
    std::memcpy(acc, next, sizeof acc);
  }
  return acc[0];
}

// quantize_i8_kernel: s = max |x_j| / 127, c_j = rint(x_j / s) clamped to +-127 (s = 0: zeros;
// a largest value below 2^-118: s = NaN, zeros).
inline float i8_quantize(const float* x, int dim, std::vector<float>* codes) {
  float m = 0.0f;
  for (int j = 0; j < dim; ++j) m = std::fmax(m, std::fabs(x[j]));
  codes->assign(static_cast<std::size_t>(dim), 0.0f);
  if (m > 0.0f && m < 0x1p-118f) return std::numeric_limits<float>::quiet_NaN();
  const float s = m / 127.0f;
  if (s > 0.0f)
    for (int j = 0; j < dim; ++j) (*codes)[j] = std::fmin(127.0f, std::fmax(-127.0f, std::rint(x[j] / s)));
  return s;
}

// i8_scan_topk_kernel's split query: s_q = max |q_j| / 127, hi = rint(q / s_q), lo =
// rint(254 (q / s_q - hi)), both clamped to +-127 (split_query_value).
struct I8Query {
  float s = 0.0f;
  std::vector<int> hi, lo;
};
inline I8Query i8_split_query(const float* q, int dim) {
  I8Query r;
  float m = 0.0f;
  for (int j = 0; j < dim; ++j) m = std::fmax(m, std::fabs(q[j]));
  r.s = m / 127.0f;
  r.hi.assign(static_cast<std::size_t>(dim), 0);
  r.lo.assign(static_cast<std::size_t>(dim), 0);
  if (!(r.s > 0.0f)) return r;
  for (int j = 0; j < dim; ++j) {
    const float t = q[j] / r.s;
    const float h = std::fmin(127.0f, std::fmax(-127.0f, std::rint(t)));
    r.hi[j] = static_cast<int>(h);
    r.lo[j] = static_cast<int>(std::fmin(127.0f, std::fmax(-127.0f, std::rint(254.0f * (t - h)))));
  }
  return r;
}

// The kernel's approximate dot of row codes (scale s_i): exact integer sums of hi * c and lo * c
// (dp4a), then fp32: s_i * (s_q * (float(hi sum) + float(lo sum) / 254)).
inline float i8_dot(const I8Query& q, const float* codes, int dim, float s_i) {
  long long hs = 0, ls = 0;
  for (int j = 0; j < dim; ++j) {
    const long long c = static_cast<long long>(codes[j]);
    hs += q.hi[j] * c;
    ls += q.lo[j] * c;
  }
  const float sum = static_cast<float>(static_cast<int>(hs)) + static_cast<float>(static_cast<int>(ls)) / 254.0f;
  return s_i * (q.s * sum);
}

// A batched GEMM tile's approximate cosine: the query normalised as normalize_queries_kernel
// does (q_j * (1 / |q|)), both operands in the GEMM type, products accumulated in fp32 in one
// of two orders (sequential fma; pairwise sums of exact-in-double products rounded to fp32),
// optionally flushing subnormal products and sums to zero as tensor cores may, then the
// score times 1 / |x| (inverse_norms_kernel).
enum class GemmOrder { kSequential, kPairwise, kPairwiseFlush };
// `fp16_score`: the fp32 result rounded once to fp16 before the scaling (batch_f16_h).
inline float gemm_cosine(GemmInput g, const float* q, float qn, const float* x, float xn, int dim, GemmOrder order,
                         bool fp16_score = false) {
  auto operand = [&](float v) {
    return g == GemmInput::TF32   ? truncate_tf32(v)
           : g == GemmInput::BF16 ? round_bf16(v)
           : g == GemmInput::F16  ? round_f16(v)
                                  : v;
  };
  const float inv_q = 1.0f / qn;
  std::vector<float> terms(static_cast<std::size_t>(dim));
  float acc = 0.0f;
  auto flush = [&](float v) { return order == GemmOrder::kPairwiseFlush && std::fabs(v) < 0x1p-126f ? 0.0f : v; };
  for (int j = 0; j < dim; ++j) {
    const float a = operand(q[j] * inv_q), b = operand(x[j]);
    if (order == GemmOrder::kSequential)
      acc = std::fmaf(a, b, acc);
    else
      terms[static_cast<std::size_t>(j)] = flush(static_cast<float>(double(a) * double(b)));
  }
  if (order != GemmOrder::kSequential) {
    for (std::size_t w = 1; w < terms.size(); w *= 2)
      for (std::size_t i = 0; i + w < terms.size(); i += 2 * w) terms[i] = flush(terms[i] + terms[i + w]);
    acc = terms.empty() ? 0.0f : terms[0];
  }
  if (fp16_score) acc = round_f16(acc);
  const float inv_x = xn > 0.0f ? 1.0f / xn : 0.0f;
  return acc * inv_x;
}

}  // namespace distancies::emu
