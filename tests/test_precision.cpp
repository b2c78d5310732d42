// The reduced-precision certificates on the CPU (no GPU needed): the arithmetic of the fused
// fp32 scan, the 16-bit scan and the batched GEMM tiles emulated bit for bit
// (tests/fp_emulation.hpp) over the families the audit of issue 21 found holes in (tiny
// scales, huge scales, NaN, native models flagged `normalized`): inside the range guard every
// error stays within its bound; outside it the guard fires.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "fp_emulation.hpp"
#include "harness/cpu_search.hpp"
#include "harness/formats.hpp"
#include "kernels/common/ranking.hpp"
#include "runtime/error.hpp"
#include "test_models.hpp"
#include "variants/embeddings/precision.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

struct EmuModel {
  int dim = 0;
  std::vector<std::vector<float>> rows;
  std::vector<float> norms;  // vector_norm of each row, as every loader computes them
  NormRange range() const {
    NormRange r{INFINITY, 0, true};
    for (float n : norms) {
      if (!std::isfinite(n))
        r.finite = false;
      else if (n > 0)
        r.min_norm = std::min(r.min_norm, n), r.max_norm = std::max(r.max_norm, n);
    }
    return r;
  }
  void add(std::vector<float> v) {
    norms.push_back(vector_norm(v.data(), dim));
    rows.push_back(std::move(v));
  }
};

EmuModel gaussian(int rows, int dim, double scale, std::uint32_t seed) {
  EmuModel m;
  m.dim = dim;
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0, 1);
  for (int r = 0; r < rows; ++r) {
    std::vector<float> v(static_cast<std::size_t>(dim));
    for (float& x : v) x = static_cast<float>(g(rng) * scale);
    m.add(std::move(v));
  }
  return m;
}

std::vector<float> fused_sims(const EmuModel& m, const std::vector<float>& q, float qn) {
  std::vector<float> s;
  for (std::size_t r = 0; r < m.rows.size(); ++r)
    s.push_back(emu::cosine_from_dot(emu::fused_dot(q.data(), m.rows[r].data(), m.dim), qn, m.norms[r]));
  return s;
}

// The 16-bit copy; `overflow` when a value becomes Inf (ReducedCopy::out_of_range).
std::vector<std::vector<float>> reduced_copy(const EmuModel& m, Storage st, bool* overflow) {
  std::vector<std::vector<float>> out;
  *overflow = false;
  for (const auto& row : m.rows) {
    std::vector<float> v;
    for (float x : row) {
      v.push_back(emu::round_storage(st, x));
      if (std::isinf(v.back())) *overflow = true;
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<float> reduced_sims(const EmuModel& m, const std::vector<std::vector<float>>& copy,
                                const std::vector<float>& q, float qn) {
  std::vector<float> s;
  for (std::size_t r = 0; r < m.rows.size(); ++r)
    s.push_back(emu::cosine_from_dot(emu::reduced_dot(q.data(), copy[r].data(), m.dim), qn, m.norms[r]));
  return s;
}

// fused's top k: the WarpTopk order (NaN never admitted).
std::vector<int> top_k(const std::vector<float>& s, int k) {
  std::vector<int> idx;
  for (int r = 0; r < static_cast<int>(s.size()); ++r)
    if (!std::isnan(s[r])) idx.push_back(r);
  std::sort(idx.begin(), idx.end(), [&](int a, int b) { return ranks_before(s[a], a, s[b], b); });
  if (static_cast<int>(idx.size()) > k) idx.resize(static_cast<std::size_t>(k));
  return idx;
}

// The 16-bit pipeline's certificate (scan, K candidates, exact re-rank, certifies()).
struct Certified {
  bool certified;
  std::vector<int> top;
};
Certified emulate_certificate(const std::vector<float>& approx, const std::vector<float>& exact, int k, float bound) {
  const int K = std::min(128, std::max(64, 2 * k));
  std::vector<float> key(approx.size());
  for (std::size_t r = 0; r < approx.size(); ++r) key[r] = approx_rank_key(approx[r]);
  std::vector<int> cand = top_k(key, K);
  const bool all_seen = static_cast<int>(cand.size()) < K;
  bool nan = false;
  std::vector<float> ex(exact.size(), NAN);
  for (int r : cand) {
    ex[static_cast<std::size_t>(r)] = exact[static_cast<std::size_t>(r)];
    nan = nan || std::isnan(exact[static_cast<std::size_t>(r)]);
  }
  Certified c;
  c.top = top_k(ex, k);
  const float kth = static_cast<int>(c.top.size()) == k ? exact[static_cast<std::size_t>(c.top.back())] : -FLT_MAX;
  const float last = all_seen ? -FLT_MAX : key[static_cast<std::size_t>(cand.back())];
  c.certified = certifies(kth, last, bound, all_seen, nan);
  return c;
}

// Every row's |16-bit - fp32| against the bound; returns the worst ratio, counts rows beyond.
double worst_ratio(const std::vector<float>& a, const std::vector<float>& e, float bound, int* beyond) {
  double worst = 0;
  *beyond = 0;
  for (std::size_t r = 0; r < a.size(); ++r) {
    const double d = std::fabs(double(a[r]) - double(e[r]));
    if (!(d <= bound)) ++*beyond;
    worst = std::max(worst, std::isnan(d) ? INFINITY : d / bound);
  }
  return worst;
}

// reduced_error_bound as it was before the range guard (no subnormal-product term): what the
// audit measured its counterexamples against.
float bound_before_the_guard(Storage s, int dim, const float* q, float qn, float min_norm) {
  const double u = s == Storage::F16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  const double tiny = s == Storage::F16 ? std::ldexp(1.0, -25) : std::ldexp(1.0, -134);
  const double eps = std::ldexp(1.0, -24);
  const double gamma = (dim + 5) * eps / (1.0 - (dim + 5) * eps);
  double l1 = 0;
  for (int j = 0; j < dim; ++j) l1 += std::fabs(q[j]);
  const double bound = u * (1 + gamma) + tiny * l1 / (double(qn) * min_norm) + 2 * gamma * (1 + u) + 16 * eps;
  return static_cast<float>(bound * (1 + 1e-6));
}

}  // namespace

TEST(FpEmulation, ConversionsRoundToNearestEven) {
  EXPECT_EQ(emu::round_f16(1.0f + 0x1p-11f), 1.0f);                // tie to even
  EXPECT_EQ(emu::round_f16(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);  // tie to even, upwards
  EXPECT_EQ(emu::round_f16(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(emu::round_f16(65520.0f)));  // the per-element overflow
  EXPECT_EQ(emu::round_f16(0x1p-25f), 0.0f);          // half the smallest subnormal: to even
  EXPECT_EQ(emu::round_f16(0x1.8p-25f), 0x1p-24f);
  EXPECT_EQ(emu::round_bf16(0x1p-75f * (1 + 0x1p-9f - 0x1p-20f)), 0x1p-75f);
  EXPECT_EQ(emu::round_bf16(0x1p-133f * 1.5f), 0x1p-132f);  // bf16 subnormal tie to even
  EXPECT_EQ(emu::truncate_tf32(0x1p-140f), 0.0f);           // as on the H100
  EXPECT_EQ(emu::truncate_tf32(0x1p-136f), 0x1p-136f);
  EXPECT_EQ(emu::truncate_tf32(1.0f + 0x1p-10f + 0x1p-11f), 1.0f + 0x1p-10f);
  EXPECT_EQ(std::fmaf(0x1p-75f, 0x1p-75f, 0.0f), 0.0f);  // 2^-150: a tie, to even (0)
}

// The audit's counterexample: D = 300, query components 2^-75, one row 2^-75 (1 + 2^-9 - 2^-20)
// among 300 ordinary rows, k = 1. fused scores that row 2.0, the bf16 scan 0: without the
// guard the certificate would pass a wrong top 1; the guard refuses the query.
TEST(RangeGuard, AuditCounterexampleIsRefused) {
  const int dim = 300;
  EmuModel m = gaussian(300, dim, 1.0, 21);
  m.add(std::vector<float>(dim, 0x1p-75f * (1 + 0x1p-9f - 0x1p-20f)));
  const int special = 300;
  const std::vector<float> q(dim, 0x1p-75f);
  const float qn = vector_norm(q.data(), dim);
  const auto exact = fused_sims(m, q, qn);
  EXPECT_EQ(exact[special], 2.0f) << "the emulation must reproduce the audit's fp32 arithmetic";
  bool overflow = false;
  const auto approx = reduced_sims(m, reduced_copy(m, Storage::BF16, &overflow), q, qn);
  EXPECT_EQ(approx[special], 0.0f);
  const float bound = bound_before_the_guard(Storage::BF16, dim, q.data(), qn, m.range().min_norm);
  EXPECT_GT(std::fabs(exact[special] - approx[special]) / bound, 100.0) << "the hole the guard closes";
  std::printf("audit counterexample: |fused - bf16| = %.3g = %.0f x the bound without the guard\n",
              std::fabs(exact[special] - approx[special]), std::fabs(exact[special] - approx[special]) / bound);
  const Certified c = emulate_certificate(approx, exact, 1, bound);
  EXPECT_TRUE(c.certified && c.top[0] != special) << "without the guard a wrong top 1 is certified";
  EXPECT_EQ(top_k(exact, 1)[0], special);
  EXPECT_FALSE(reduced_in_range(qn, m.range()));
}

// Gaussian models at every scale from 2^-90 to 2^70 (the audit's 3e-23 and 1e19+ norms among
// them): inside the guard, every row's 16-bit similarity is within the bound and finite, and a
// certified top k is fused's; outside it the guard (or the copy's overflow flag) refuses.
TEST(RangeGuard, ScaleSweepBoundHoldsOrGuardFires) {
  const int dim = 300, rows = 200, k = 10;
  int checked = 0, refused = 0;
  double worst_inside = 0;
  std::vector<int> exps;
  for (int e = -90; e <= 70; e += 4) exps.push_back(e);
  for (int e = -56; e <= -50; ++e) exps.push_back(e);  // around |q| n_min = 2^-100
  for (int e = 52; e <= 56; ++e) exps.push_back(e);    // around |q| n_max = 2^120
  exps.push_back(-75);                                 // entries ~3e-23 (the audit's)
  for (int e : exps) {
    const EmuModel m = gaussian(rows, dim, std::ldexp(1.0, e), 1000u + static_cast<unsigned>(e + 100));
    for (Storage st : {Storage::F16, Storage::BF16}) {
      bool overflow = false;
      const auto copy = reduced_copy(m, st, &overflow);
      for (int qi = 0; qi < 3; ++qi) {
        SCOPED_TRACE("scale 2^" + std::to_string(e) + " " + storage_name(st) + " query row " + std::to_string(qi));
        const auto& q = m.rows[static_cast<std::size_t>(qi * 37)];
        const float qn = vector_norm(q.data(), dim);
        if (overflow || !reduced_in_range(qn, m.range())) {
          ++refused;
          continue;
        }
        ++checked;
        const auto exact = fused_sims(m, q, qn);
        const auto approx = reduced_sims(m, copy, q, qn);
        const float bound = reduced_error_bound(st, dim, q.data(), qn, m.range().min_norm);
        int beyond = 0;
        const double worst = worst_ratio(approx, exact, bound, &beyond);
        EXPECT_EQ(beyond, 0) << "worst " << worst << " x the bound";
        worst_inside = std::max(worst_inside, worst);
        for (float s : exact) ASSERT_TRUE(std::isfinite(s));
        const Certified c = emulate_certificate(approx, exact, k, bound);
        if (c.certified) {
          EXPECT_EQ(c.top, top_k(exact, k));
        }
      }
    }
  }
  std::printf("scale sweep: %d queries inside the guard (worst error %.3f x the bound), %d refused\n", checked,
              worst_inside, refused);
  EXPECT_GT(checked, 40);
  EXPECT_GT(refused, 40);
}

// The audit's tiny family without the guard: entries ~3e-23 put rows beyond the bf16 bound
// (it counted 314 of 2,000). The guard refuses every query of it.
TEST(RangeGuard, TinyGaussianBreaksTheBoundAndIsRefused) {
  const int dim = 300;
  const EmuModel m = gaussian(2000, dim, 3e-23, 7);
  bool overflow = false;
  const auto copy = reduced_copy(m, Storage::BF16, &overflow);
  const auto& q = m.rows[5];
  const float qn = vector_norm(q.data(), dim);
  const float bound = bound_before_the_guard(Storage::BF16, dim, q.data(), qn, m.range().min_norm);
  int beyond = 0;
  const double worst = worst_ratio(reduced_sims(m, copy, q, qn), fused_sims(m, q, qn), bound, &beyond);
  std::printf("entries ~3e-23, bf16, no guard: %d of 2000 rows beyond the bound (worst %.2f x)\n", beyond, worst);
  EXPECT_GT(beyond, 0);
  EXPECT_FALSE(reduced_in_range(qn, m.range()));
}

// Norms ~3e19: |q||x| overflows fp32 on the exact path (Inf / NaN similarities); refused.
TEST(RangeGuard, HugeNormsAreRefused) {
  const int dim = 300;
  const EmuModel m = gaussian(50, dim, 3e19 / std::sqrt(300.0), 3);
  const auto& q = m.rows[0];
  const float qn = vector_norm(q.data(), dim);
  const auto exact = fused_sims(m, q, qn);
  EXPECT_FALSE(std::isfinite(exact[0])) << "the fp32 path itself leaves the range here";
  EXPECT_FALSE(reduced_in_range(qn, m.range()));
  EXPECT_FALSE(batch_query_in_range(qn, m.range()));
  NormRange inf_norm{1.0f, INFINITY, false};  // a row whose norm overflowed
  EXPECT_FALSE(reduced_in_range(1.0f, inf_norm));
}

TEST(Certificate, NanOrderingIsExplicit) {
  EXPECT_FALSE(ranks_before(NAN, 0, 0.5f, 1));
  EXPECT_FALSE(ranks_before(0.5f, 1, NAN, 0));
  EXPECT_EQ(approx_rank_key(NAN), INFINITY);  // a NaN approximate score stays a candidate
  EXPECT_EQ(approx_rank_key(0.25f), 0.25f);
  EXPECT_TRUE(certifies(0.9f, 0.5f, 0.01f, false, false));
  EXPECT_FALSE(certifies(0.9f, 0.5f, 0.01f, false, true));  // an exact NaN candidate
  EXPECT_FALSE(certifies(0.9f, 0.5f, 0.01f, true, true));   // even with every row seen
  EXPECT_FALSE(certifies(NAN, 0.5f, 0.01f, false, false));
  EXPECT_FALSE(certifies(0.9f, NAN, 0.01f, false, false));
  EXPECT_FALSE(certifies(0.9f, INFINITY, 0.01f, false, false));  // a NaN approximate among the K
  EXPECT_FALSE(certifies(0.9f, 0.5f, NAN, false, false));
  // A NaN row: its norm is NaN, so the model is out of range for every query.
  EmuModel m = gaussian(10, 8, 1.0, 5);
  std::vector<float> bad(8, 1.0f);
  bad[3] = NAN;
  m.add(bad);
  EXPECT_FALSE(reduced_in_range(1.0f, m.range()));
  // Approximate NaN with every row seen: the NaN row is a candidate, so its exact NaN refuses.
  const std::vector<float> approx = {0.5f, NAN, 0.1f}, exact = {0.5f, NAN, 0.1f};
  const Certified c = emulate_certificate(approx, exact, 1, 0.01f);
  EXPECT_FALSE(c.certified);
  EXPECT_EQ(c.top[0], 0) << "a NaN is never ranked first";
}

// The int8 copy's keys (i8_scan_topk_kernel, emulated bit for bit): for every row, the fp32
// similarity `fused` computes is at most the key plus the global bound, and at least the
// approximate similarity minus the row's bound and the global bound; and where the emulated
// certificate holds, its top k is fused's. Random rows at several scales and dims, plus rows
// built to stress the quantisation: one dominant coordinate, values at +-max, alternating
// signs, tiny and huge scales, zero rows, exact ties.
TEST(Int8Bound, KeysBoundTheFp32SimilarityAndCertifiedAnswersAreFused) {
  int need_row_term = 0, certified = 0;  // the test is not vacuous: both happen
  for (int dim : {7, 50, 300, 301}) {
    for (double scale : {1.0, 1e-3, 1e3}) {
      EmuModel m = gaussian(400, dim, scale, 7u + static_cast<std::uint32_t>(dim));
      std::vector<float> v(static_cast<std::size_t>(dim), 0.0f);
      v[0] = static_cast<float>(10 * scale);
      for (int j = 1; j < dim; ++j) v[j] = static_cast<float>(scale * 1e-3 * (j % 3 - 1));
      m.add(v);  // one dominant coordinate: most codes round to 0
      for (int j = 0; j < dim; ++j) v[j] = static_cast<float>(j % 2 ? scale : -scale);
      m.add(v);                                                        // every value at +-max
      m.add(v);                                                        // an exact duplicate: a tie
      m.add(std::vector<float>(static_cast<std::size_t>(dim), 0.0f));  // a zero row
      for (int j = 0; j < dim; ++j) v[j] = static_cast<float>(scale * (0.5 + 0.49 * std::sin(j)));
      m.add(v);  // codes near half-way points
      for (int qi = 0; qi < 4; ++qi) {
        std::vector<float> q =
            qi == 0 ? m.rows[0] : gaussian(1, dim, 1.0, 100u + static_cast<std::uint32_t>(qi)).rows[0];
        if (qi == 3) q = m.rows[m.rows.size() - 5];  // the dominant row as the query
        const float qn = vector_norm(q.data(), dim);
        const NormRange r = m.range();
        ASSERT_TRUE(reduced_in_range(qn, r));
        const float global = reduced_error_bound(Storage::I8, dim, q.data(), qn, r.min_norm);
        const float factor = i8_row_bound_factor(dim, q.data(), qn);
        const std::vector<float> exact = fused_sims(m, q, qn);
        std::vector<float> key(m.rows.size()), approx(m.rows.size());
        std::vector<float> codes;
        ASSERT_TRUE(i8_query_in_range(dim, q.data()));
        const emu::I8Query split = emu::i8_split_query(q.data(), dim);
        for (int j = 0; j < dim; ++j) {  // the split's step: |q - s_q (hi + lo / 254)| <= s_q (1/508 + 2^-20)
          const double back = double(split.s) * (split.hi[j] + split.lo[j] / 254.0);
          ASSERT_LE(std::fabs(q[j] - back), double(split.s) * (1.0 / 508 + 0x1p-20)) << "dim " << dim << " j " << j;
        }
        for (std::size_t i = 0; i < m.rows.size(); ++i) {
          const float s = emu::i8_quantize(m.rows[i].data(), dim, &codes);
          const float n = m.norms[i];
          approx[i] = emu::cosine_from_dot(emu::i8_dot(split, codes.data(), dim, s), qn, n);
          const float b = n > 0.0f ? s * factor / n : 0.0f;
          key[i] = approx[i] + b;
          EXPECT_LE(exact[i], key[i] + global) << "dim " << dim << " scale " << scale << " row " << i;
          EXPECT_GE(exact[i], approx[i] - b - global) << "dim " << dim << " scale " << scale << " row " << i;
          need_row_term += exact[i] > approx[i] + global;
        }
        for (int k : {1, 10, 100}) {
          const Certified c = emulate_certificate(key, exact, k, global);
          if (c.certified) {
            EXPECT_EQ(c.top, top_k(exact, k)) << "dim " << dim << " k " << k;
          }
          certified += c.certified;
        }
      }
    }
  }
  EXPECT_GT(need_row_term, 1000)
      << "rows whose fp32 similarity exceeds the approximate one by more than the global term";
  EXPECT_GT(certified, 10);
}

// Below 2^-118 the split's step s_q (and a row's scale) would be subnormal and its division
// inexact: the query is refused (fused answers, counted) and such a row gets a NaN scale (always a
// candidate: it can only make the certificate fail, never pass wrongly).
TEST(Int8Bound, TooSmallValuesAreRefused) {
  std::vector<float> q(300, 0x1p-119f);
  EXPECT_FALSE(i8_query_in_range(300, q.data()));
  q[7] = 0x1p-118f;
  EXPECT_TRUE(i8_query_in_range(300, q.data()));
  q[8] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(i8_query_in_range(300, q.data()));
  std::vector<float> row(300, 0x1p-120f), codes;
  EXPECT_TRUE(std::isnan(emu::i8_quantize(row.data(), 300, &codes)));
  std::fill(row.begin(), row.end(), 0.0f);
  EXPECT_EQ(emu::i8_quantize(row.data(), 300, &codes), 0.0f);
}

// The batched tiles: operands rounded (RN bf16 / fp16, TF32 truncation incl. subnormals), fp32
// accumulation in several orders (and flushing subnormals), fp16 scores for batch_f16_h. Inside
// batch_query_in_range the error is within gemm_error_bound with the model's smallest norm.
TEST(GemmBound, HoldsAtEveryScaleInsideTheGuard) {
  const int dim = 300, rows = 60;
  int checked = 0, refused = 0;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> tiny_exp(-149, -120);
  for (int e = -90; e <= 70; e += 8) {
    EmuModel m = gaussian(rows, dim, std::ldexp(1.0, e), 2000u + static_cast<unsigned>(e + 100));
    // Mixed rows: half their entries far below the normal range (TF32 keeps 10 bits of them).
    for (int r = 0; r < rows; r += 3)
      for (int j = 0; j < dim; j += 2) {
        float& x = m.rows[static_cast<std::size_t>(r)][static_cast<std::size_t>(j)];
        x = std::ldexp(x > 0 ? 1.0f : -1.0f, tiny_exp(rng));
      }
    for (std::size_t r = 0; r < m.rows.size(); ++r) m.norms[r] = vector_norm(m.rows[r].data(), dim);
    const NormRange range = m.range();
    for (GemmInput g : {GemmInput::F32, GemmInput::TF32, GemmInput::BF16, GemmInput::F16})
      for (Storage scores : {Storage::F32, Storage::F16}) {
        if (scores == Storage::F16 && g != GemmInput::F16) continue;
        bool overflow = false;
        if (g == GemmInput::F16 || g == GemmInput::BF16) reduced_copy(m, gemm_storage(g), &overflow);
        if (scores == Storage::F16 && !(range.max_norm <= 60000.0f)) overflow = true;
        for (int qi = 1; qi < 4; ++qi) {
          const auto& q = m.rows[static_cast<std::size_t>(qi * 11)];
          const float qn = vector_norm(q.data(), dim);
          if (overflow || !batch_query_in_range(qn, range)) {
            ++refused;
            continue;
          }
          ++checked;
          SCOPED_TRACE("scale 2^" + std::to_string(e) + " " + gemm_input_name(g) +
                       (scores == Storage::F16 ? " fp16 scores" : ""));
          const float bound = gemm_error_bound(g, dim, range.min_norm, scores);
          const auto exact = fused_sims(m, q, qn);
          for (auto order : {emu::GemmOrder::kSequential, emu::GemmOrder::kPairwise, emu::GemmOrder::kPairwiseFlush})
            for (std::size_t r = 0; r < m.rows.size(); ++r) {
              const float a =
                  emu::gemm_cosine(g, q.data(), qn, m.rows[r].data(), m.norms[r], dim, order, scores == Storage::F16);
              ASSERT_LE(std::fabs(double(a) - exact[r]), bound) << "row " << r;
            }
        }
      }
  }
  EXPECT_GT(checked, 50);
  EXPECT_GT(refused, 20);
  EXPECT_TRUE(std::isinf(gemm_error_bound(GemmInput::TF32, dim, 0.0f))) << "an unknown smallest norm certifies nothing";
  std::printf(
      "gemm_error_bound at D = 300, smallest norm 1: fp32 %.3g, tf32 %.3g, bf16 %.3g, fp16 %.3g, fp16 scores %.3g\n",
      gemm_error_bound(GemmInput::F32, dim, 1), gemm_error_bound(GemmInput::TF32, dim, 1),
      gemm_error_bound(GemmInput::BF16, dim, 1), gemm_error_bound(GemmInput::F16, dim, 1),
      gemm_error_bound(GemmInput::F16, dim, 1, Storage::F16));
}

// Native models flagged `normalized`: unit rows searched as they are (norms recomputed, 1
// within rounding), the stored norms kept as data only; every search and the bounds' premise
// norms[r] = |x_r| hold on them.
TEST(NormalizedFlag, UnitRowsAreSearchedWithTheirOwnNorms) {
  const auto dir = std::filesystem::temp_directory_path() / ("distancies_norm_" + std::to_string(fresh_seed()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "n.dst").string();
  Model m = random_model({500, 300, 17, 2, 0});
  std::vector<float> original = m.norms;
  for (std::int64_t i = 0; i < m.rows; ++i) {
    const float n = m.norms[static_cast<std::size_t>(i)];
    if (n > 0)
      for (int j = 0; j < m.dim; ++j) m.row(i)[j] = m.row(i)[j] / n * (3.0f + static_cast<float>(i % 5));
  }
  // Rows now have norms 3..7: not unit, so a flagged file of them is refused...
  m.normalized = true;
  save_native(m, path);
  EXPECT_THROW(load_model(path), Error);
  // ...and once unit, accepted.
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (int j = 0; j < m.dim; ++j) m.row(i)[j] /= (3.0f + static_cast<float>(i % 5));
  save_native(m, path);
  const Model n = load_model(path);
  ASSERT_TRUE(n.normalized);
  EXPECT_EQ(n.original_norms, original) << "the stored norms are kept as data";
  for (std::int64_t i = 0; i < n.rows; ++i) {
    const float nr = n.norms[static_cast<std::size_t>(i)];
    EXPECT_EQ(nr, vector_norm(n.row(i), n.dim)) << "norms are the rows' own";
    if (nr != 0) {
      EXPECT_NEAR(nr, 1.0f, 1e-5f);
    }
  }
  // Every similarity a cosine ([-1, 1] up to rounding), and the CPU search is the oracle's.
  const float* q = n.row(42);
  const float qn = n.norms[42];
  const auto seq = sequential_search(n, q, qn, 10);
  const auto ora = oracle_search(n, q, 10);
  ASSERT_EQ(seq.size(), ora.size());
  for (std::size_t i = 0; i < seq.size(); ++i) {
    EXPECT_LE(std::fabs(seq[i].sim), 1.0f + 1e-6f);
    EXPECT_NEAR(seq[i].sim, ora[i].sim, 1e-6);
  }
  EXPECT_EQ(seq[0].row, 42);
  // The 16-bit bound's premise holds: the emulated scans stay within it.
  EmuModel e;
  e.dim = n.dim;
  for (std::int64_t i = 0; i < n.rows; ++i) e.add(std::vector<float>(n.row(i), n.row(i) + n.dim));
  EXPECT_EQ(e.norms, n.norms);
  const std::vector<float> qv(q, q + n.dim);
  for (Storage st : {Storage::F16, Storage::BF16}) {
    bool overflow = false;
    const auto approx = reduced_sims(e, reduced_copy(e, st, &overflow), qv, qn);
    int beyond = 0;
    worst_ratio(approx, fused_sims(e, qv, qn), reduced_error_bound(st, n.dim, q, qn, e.range().min_norm), &beyond);
    EXPECT_EQ(beyond, 0) << storage_name(st);
  }
  // Saved again, the originals go back to the file.
  save_native(n, path);
  EXPECT_EQ(load_model(path).original_norms, original);
  std::filesystem::remove_all(dir);
}
