// The centred copies (kernels/embeddings/centre.cuh; docs/batch.md, "Centred copies"): the
// identity they rest on and its rounding, and the centred int8 keys, emulated on the host; the
// policy; every int8 score of the centred tiled copy within its bound; and the filtered batches
// and the one-query reduced scans exact on anisotropic data, planted near-ties included, with
// fewer fallbacks than the plain copies. GPU tests skip,
// visibly, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "batch_check.hpp"
#include "fp_emulation.hpp"
#include "gpu_skip.hpp"
#include "harness/embeddings/batch_search.hpp"
#include "harness/synthetic.hpp"
#include "kernels/embeddings/tiled_i8.cuh"
#include "runtime/device_model.hpp"
#include "runtime/error.hpp"
#include "test_models.hpp"
#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/precision.hpp"
#include "variants/embeddings/registry.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

// DISTANCIES_CENTRE for one scope (the policy is read when a model is first centred).
struct CentreSetting {
  explicit CentreSetting(const char* v, const char* name = "DISTANCIES_CENTRE") : name_(name) { setenv(name, v, 1); }
  ~CentreSetting() { unsetenv(name_); }
  const char* name_;
};

Batch rows_as_queries(const Model& m, int batch, std::uint32_t seed, float jitter) {
  Batch b;
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (int i = 0; i < batch; ++i) {
    const std::int64_t row = (static_cast<std::int64_t>(i) * 104729 + seed) % m.rows;
    std::vector<float> q(m.row(row), m.row(row) + m.dim);
    for (float& v : q) v += jitter * noise(rng);
    b.q.insert(b.q.end(), q.begin(), q.end());
    b.norms.push_back(vector_norm(q.data(), m.dim));
  }
  return b;
}

// mu as DeviceModel::centre() makes it (fp64 sums of x / |x|), the rows y = x - |x| mu (fma),
// and rho rounded up; two rows planted first: n mu itself and its opposite (y ~ 0, |y| ~ 2 |x|).
struct CentredRows {
  std::vector<float> mu;
  std::vector<std::vector<float>> y;
  float rho = 0;
  double mean_norm2 = 0, mean_l1 = 0;
};
CentredRows centre_rows(Model& m) {
  const int dim = m.dim;
  CentredRows c;
  std::vector<double> sum(static_cast<std::size_t>(dim), 0.0);
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (int j = 0; j < dim; ++j) sum[j] += double(m.row(r)[j]) / m.norms[r];
  c.mu.resize(static_cast<std::size_t>(dim));
  for (int j = 0; j < dim; ++j) {
    c.mu[j] = static_cast<float>(sum[j] / double(m.rows));
    c.mean_norm2 += double(c.mu[j]) * c.mu[j];
    c.mean_l1 += std::fabs(double(c.mu[j]));
  }
  for (int e = 0; e < 2; ++e) {
    float* v = m.vectors.data() + (10 + e) * m.ld;
    for (int j = 0; j < dim; ++j) v[j] = (e ? -3.0f : 3.0f) * c.mu[j];
    m.norms[10 + e] = vector_norm(v, dim);
  }
  double rho = 0;
  c.y.assign(static_cast<std::size_t>(m.rows), std::vector<float>(static_cast<std::size_t>(dim)));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    double yy = 0;
    for (int j = 0; j < dim; ++j) {
      c.y[r][j] = std::fmaf(-m.norms[r], c.mu[j], m.row(r)[j]);
      yy += double(c.y[r][j]) * c.y[r][j];
    }
    rho = std::max(rho, std::sqrt(yy) / m.norms[r]);
  }
  c.rho = static_cast<float>(rho * (1 + 1e-6));
  return c;
}

// One query against every row, plain and centred int8 copies emulated bit for bit (asserting
// each centred key's bounds): how many rows each leaves at or above the fp32 10th best.
struct RowsLeft {
  long long plain = 0, centred = 0;
};
RowsLeft int8_rows_left(const Model& m, const CentredRows& c, const std::vector<float>& q) {
  const int dim = m.dim;
  const float qn = vector_norm(q.data(), dim);
  double qm = 0;
  for (int j = 0; j < dim; ++j) qm += double(q[j]) * c.mu[j];
  const float shift = static_cast<float>(qm / qn);
  const float w = static_cast<float>(qm / static_cast<float>(c.mean_norm2));
  const I8CentredBound centred = i8_centred_bound(dim, q.data(), qn, c.mu.data(), w);
  const float correction = centred.correction;
  EXPECT_GE(double(correction), std::fabs(double(w)) * c.mean_l1);  // the fma's rounding of w c_i is covered
  const NormRange range = host_norm_range(m.norms.data(), m.rows);
  const float global =
      with_centre_slack(reduced_error_bound(Storage::I8, dim, q.data(), qn, range.min_norm, c.rho, correction), c.rho);
  const float plain_global = reduced_error_bound(Storage::I8, dim, q.data(), qn, range.min_norm);
  const float factor = centred.row_bound_factor;
  const float plain_factor = i8_row_bound_factor(dim, q.data(), qn);
  const emu::I8Query split = emu::i8_split_query(q.data(), dim);
  std::vector<float> exact(static_cast<std::size_t>(m.rows)), key(exact.size()), plain_key(exact.size());
  std::vector<float> codes;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const float n = m.norms[r];
    exact[r] = emu::cosine_from_dot(emu::fused_dot(q.data(), m.row(r), dim), qn, n);
    const float s = emu::i8_quantize(c.y[r].data(), dim, &codes);
    double cr = 0;  // quantize_i8_kernel's correction: mu . (y - s codes) in fp64, rounded once
    for (int j = 0; j < dim; ++j) cr += double(c.mu[j]) * (double(c.y[r][j]) - double(s) * codes[j]);
    const float dot = std::fmaf(w, static_cast<float>(cr), emu::i8_dot(split, codes.data(), dim, s));
    const float approx = emu::cosine_from_dot(dot, qn, n);
    const float b = s * factor / n;
    key[r] = approx + b;
    EXPECT_LE(exact[r], key[r] + shift + global) << "row " << r;
    EXPECT_GE(exact[r], approx - b + shift - global) << "row " << r;
    const float sp = emu::i8_quantize(m.row(r), dim, &codes);
    plain_key[r] = emu::cosine_from_dot(emu::i8_dot(split, codes.data(), dim, sp), qn, n) + sp * plain_factor / n;
  }
  std::vector<float> sorted = exact;
  std::nth_element(sorted.begin(), sorted.begin() + 9, sorted.end(), std::greater<float>());
  RowsLeft left;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    left.centred += key[r] + shift + global >= sorted[9];
    left.plain += plain_key[r] + plain_global >= sorted[9];
  }
  return left;
}

// Rows 100 ... 299 of an aniso model: one nearly the mean direction, one opposite it, and norms
// from 1e-10 to 1e10.
void plant_extreme_rows(Model& m) {
  for (long long r = 100; r < 300; ++r) {
    float* v = m.vectors.data() + r * m.ld;
    if (r == 100)
      for (int j = 0; j < m.dim; ++j) v[j] = m.row(0)[j] + m.row(1)[j];
    else if (r == 101)
      for (int j = 0; j < m.dim; ++j) v[j] = -m.row(0)[j];
    else {
      const float scale = std::pow(10.0f, -10.0f + 20.0f * static_cast<float>(r - 102) / 197.0f);
      for (int j = 0; j < m.dim; ++j) v[j] *= scale;
    }
    m.norms[r] = vector_norm(v, m.dim);
  }
}

// Near-ties planted in rows 1000 ... 1011: copies of row 5 nudged by 1e-7 ... 1e-3 in one
// coordinate (and one exact copy); then `batch` queries, the first row 5 itself.
Batch near_ties_of_row_5(Model& m, int batch, std::uint32_t seed) {
  for (int i = 0; i < 12; ++i) {
    float* v = m.vectors.data() + (1000 + i) * m.ld;
    std::memcpy(v, m.row(5), m.dim * sizeof(float));
    if (i > 0) v[i % m.dim] += std::pow(10.0f, -7.0f + 4.0f * (i - 1) / 10.0f);
    m.norms[1000 + i] = vector_norm(v, m.dim);
  }
  Batch b = rows_as_queries(m, batch, seed, 0.02f);
  std::memcpy(b.q.data(), m.row(5), m.dim * sizeof(float));
  b.norms[0] = m.norms[5];
  return b;
}

}  // namespace

// q . x / (Q n) = q . y / (Q n) + q . mu / Q with y_j = fma(-n, mu_j, x_j) in fp32 and the shift
// rounded from double: the difference stays within centre_slack(|y| / n), for aniso rows, a row
// that is n mu itself (y ~ 0), rows opposite mu, and norms from 1e-20 to 1e20.
TEST(CentredCopy, SlackCoversTheRoundingOfTheIdentity) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  double worst = 0;
  for (int dim : {3, 50, 300, 1000}) {
    std::vector<float> mu(dim), x(dim), q(dim), y(dim);
    for (int trial = 0; trial < 400; ++trial) {
      double mm = 0;
      const float a = std::pow(10.0f, -2.0f + 2.0f * (trial % 5) / 4.0f);
      for (int j = 0; j < dim; ++j) mu[j] = g(rng), mm += double(mu[j]) * mu[j];
      for (int j = 0; j < dim; ++j) mu[j] = static_cast<float>(mu[j] / std::sqrt(mm) * (trial % 7) / 7.0);
      const float scale = std::pow(10.0f, -20.0f + 40.0f * (trial % 11) / 10.0f);
      for (int j = 0; j < dim; ++j) {
        const float base = trial % 13 == 0   ? mu[j]
                           : trial % 13 == 1 ? -mu[j]
                                             : mu[j] + a * g(rng) / std::sqrt(float(dim));
        x[j] = base * scale;
        q[j] = trial % 3 == 0 ? x[j] / scale + 0.01f * g(rng) : g(rng);
      }
      const float n = vector_norm(x.data(), dim), Q = vector_norm(q.data(), dim);
      if (!(n > 0) || !(Q > 0)) continue;
      double qx = 0, qy = 0, qm = 0, yy = 0;
      for (int j = 0; j < dim; ++j) {
        y[j] = std::fmaf(-n, mu[j], x[j]);
        qx += double(q[j]) * x[j], qy += double(q[j]) * y[j], qm += double(q[j]) * mu[j], yy += double(y[j]) * y[j];
      }
      const float shift = static_cast<float>(qm / Q);
      const double rho = std::sqrt(yy) / n;
      const double diff = std::fabs(qx / (double(Q) * n) - (qy / (double(Q) * n) + shift));
      const double slack = centre_slack(static_cast<float>(rho * (1 + 1e-9)));
      ASSERT_LE(diff, slack) << "D = " << dim << ", trial " << trial << ", rho " << rho;
      worst = std::max(worst, diff / slack);
    }
  }
  RecordProperty("worst_over_slack", std::to_string(worst));
}

// The centred int8 copy (quantize_i8_kernel with the mean; i8_scan_topk_kernel reads it as it
// reads the plain one, adding w c_i to each row's dot), emulated bit for bit: the row's key plus
// the query's shift plus the global bound (reduced_error_bound with rho and the correction, with
// the centre's slack) bounds every row's fp32 similarity from above, and its approximate
// similarity less both bounds from below. On anisotropic rows the centred keys leave far fewer
// rows above the k-th similarity than the plain ones.
TEST(CentredCopy, Int8KeysOfTheResidualBoundTheSimilarity) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const char* family : {"aniso:0.95", "aniso:0.98", "dirs:0.7"}) {
    for (int dim : {50, 300}) {
      SCOPED_TRACE(std::string(family) + ", D = " + std::to_string(dim));
      Model m = make_synthetic_model(3000, dim, seed, make_family(family, dim));
      const CentredRows c = centre_rows(m);
      int fewer = 0;
      for (int qi = 0; qi < 4; ++qi) {
        std::vector<float> q(m.row(100 + 37 * qi), m.row(100 + 37 * qi) + dim);
        q[qi % dim] += 0.01f;
        const RowsLeft left = int8_rows_left(m, c, q);
        fewer += left.centred < left.plain;
        RecordProperty(
            std::string(family) + "_D" + std::to_string(dim) + "_q" + std::to_string(qi) + "_rows_left_plain_centred",
            std::to_string(left.plain) + "/" + std::to_string(left.centred));
      }
      if (std::string(family).rfind("aniso", 0) == 0) {
        EXPECT_EQ(fewer, 4);
      }
    }
  }
}

TEST(CentredCopy, OperandTermsScaleWithRho) {
  const float plain = gemm_error_bound(GemmInput::F16, 300, 1.0f, Storage::F16);
  EXPECT_EQ(gemm_error_bound(GemmInput::F16, 300, 1.0f, Storage::F16, 1.0f), plain);
  const float small = gemm_error_bound(GemmInput::F16, 300, 1.0f, Storage::F16, 0.2f);
  EXPECT_LT(small, 0.3f * plain);
  // The fp32 scan's own part stays: rho = 0 leaves more than the fp32 GEMM's rounding.
  EXPECT_GT(gemm_error_bound(GemmInput::F16, 300, 1.0f, Storage::F16, 0.0f), 0.0f);
  EXPECT_GT(centre_slack(2.0f), centre_slack(0.0f));
}

TEST(CentredCopy, PolicyTakesOnlyACommonDirectionOut) {
  DISTANCIES_REQUIRE_GPU();
  {
    DeviceModel dm = upload_model(make_synthetic_model(20011, 300, 3, make_family("aniso:0.95", 300)));
    const ModelCentre& c = prepared_centre(dm);
    EXPECT_TRUE(c.used) << c.why;
    EXPECT_NEAR(c.mean_norm2, 0.95, 0.02) << c.why;
    EXPECT_LT(c.rho, 0.4f) << c.why;
  }
  {
    DeviceModel dm = upload_model(make_synthetic_model(20011, 300, 3, make_family("iid", 300)));
    EXPECT_FALSE(prepared_centre(dm).used) << prepared_centre(dm).why;
    EXPECT_NE(prepared_centre(dm).why.find("no common direction"), std::string::npos) << prepared_centre(dm).why;
  }
  {
    const CentreSetting on("on");
    DeviceModel dm = upload_model(make_synthetic_model(20011, 300, 3, make_family("iid", 300)));
    EXPECT_TRUE(prepared_centre(dm).used) << prepared_centre(dm).why;
  }
  {
    const CentreSetting off("off");
    DeviceModel dm = upload_model(make_synthetic_model(20011, 300, 3, make_family("aniso:0.95", 300)));
    EXPECT_FALSE(prepared_centre(dm).used);
    EXPECT_THROW(prepared_reduced(dm, Storage::F16, true), Error);
  }
  {
    Model m = make_synthetic_model(2000, 300, 3, make_family("aniso:0.95", 300));
    std::memset(m.vectors.data() + 17 * m.ld, 0, m.ld * sizeof(float));
    m.norms[17] = 0;
    DeviceModel dm = upload_model(m);
    EXPECT_FALSE(prepared_centre(dm).used);
    EXPECT_NE(prepared_centre(dm).why.find("zero rows"), std::string::npos) << prepared_centre(dm).why;
  }
  {
    const CentreSetting bad("sometimes");
    DeviceModel dm = upload_model(make_synthetic_model(200, 300, 3, make_family("aniso:0.95", 300)));
    EXPECT_THROW(prepared_centre(dm), Error);
  }
}

// The centred tiled int8 copy, plain and projected: for every query and sorted row, q . y / |x|
// within A_q nu + B_q rho of s_q I / u, with y exactly as the kernels compute it and I the codes'
// dot over every column (the projected copy's mu . y columns included). Projected, the bound
// scales with the query's residual: at mean cosine 0.98 it is several times tighter.
TEST(CentredCopy, EveryInt8ScoreWithinItsBound) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int dim : {50, 300}) {
    Model m = make_synthetic_model(3001, dim, seed, make_family("aniso:0.98", dim));
    plant_extreme_rows(m);
    double widest[2] = {0, 0};      // [projected]
    std::vector<double> bounds[2];  // every (query, tile) bound
    for (int projected = 0; projected < 2; ++projected) {
      SCOPED_TRACE(projected ? "projected" : "not projected");
      const CentreSetting project(projected ? "on" : "off", "DISTANCIES_PROJECT");
      DeviceModel dm = upload_model(m);
      ASSERT_TRUE(prepared_centre(dm).used) << prepared_centre(dm).why;
      ASSERT_EQ(prepared_centre(dm).projected, projected == 1);
      const TiledI8Copy& t = prepared_tiled_i8(dm, true);
      const int ldg = t.ldg, rows = static_cast<int>(m.rows);
      ASSERT_EQ(t.extra, projected ? ldg - dim : 0);
      ASSERT_GE(t.extra, projected ? tiled_i8::kMinExtra : 0);
      const std::vector<float>& mu = prepared_centre(dm).mean_host;
      const HostTiledI8 copy = download_tiled_i8(t, rows);
      const std::vector<signed char>& codes = copy.codes;
      const std::vector<int>& order = copy.order;
      const std::vector<float4>& tile = copy.tiles;
      const int nq = 16;
      const Batch b = rows_as_queries(m, nq, seed, 0.01f);
      TiledI8Projection proj;
      if (projected) proj = {prepared_centre(dm).mean.as<float>(), prepared_centre(dm).mean_norm2, t.extra};
      const HostI8Queries iq = tiled_i8_queries_of(b, dim, ldg, proj);
      const std::vector<signed char>& qc = iq.codes;
      const std::vector<float4>& qb = iq.bounds;
      for (int r = 0; r < rows; ++r) {
        const float* x = m.row(order[r]);
        const float n = m.norms[order[r]];
        double yy = 0, my = 0;
        for (int j = 0; j < dim; ++j) {
          const double y = std::fmaf(-n, mu[j], x[j]);
          yy += y * y, my += mu[j] * y;
        }
        ASSERT_LE(std::sqrt(yy) / n, prepared_centre(dm).rho) << "the model's rho below a row's, sorted row " << r;
        if (projected) yy += t.extra * my * my;  // the mu . y columns are part of the coded row
        ASSERT_LE(std::sqrt(yy) / n, tile[r / 64].w) << "rho_max below a row's |y| / |x|, sorted row " << r;
      }
      for (int q = 0; q < nq; ++q) {
        const float inv = 1.0f / b.norms[q];
        for (int r = 0; r < rows; ++r) {
          const float* x = m.row(order[r]);
          const float n = m.norms[order[r]];
          double dot = 0;
          for (int j = 0; j < dim; ++j) dot += static_cast<double>(b.q[q * dim + j] * inv) * std::fmaf(-n, mu[j], x[j]);
          long long I = 0;
          for (int j = 0; j < ldg; ++j) I += qc[q * ldg + j] * codes[static_cast<std::size_t>(r) * ldg + j];
          const float4 u = tile[r / 64];
          const double s = qb[q].x, e = double(qb[q].y) * u.z + double(qb[q].z) * u.w;
          const double target = dot / n;
          const double hi = s * I / (I >= 0 ? u.x : u.y) + e, lo = s * I / (I >= 0 ? u.y : u.x) - e;
          ASSERT_LE(target, hi + 1e-12) << "D = " << dim << ", query " << q << ", sorted row " << r;
          ASSERT_GE(target, lo - 1e-12) << "D = " << dim << ", query " << q << ", sorted row " << r;
          widest[projected] = std::max(widest[projected], e);
          if (r % 64 == 0) bounds[projected].push_back(e);
        }
      }
    }
    double median[2];
    for (int p = 0; p < 2; ++p) {
      std::nth_element(bounds[p].begin(), bounds[p].begin() + bounds[p].size() / 2, bounds[p].end());
      median[p] = bounds[p][bounds[p].size() / 2];
    }
    const std::string d = "_D" + std::to_string(dim);
    RecordProperty("widest_bound" + d, std::to_string(widest[0]));
    RecordProperty("widest_projected_bound" + d, std::to_string(widest[1]));
    RecordProperty("median_bound" + d, std::to_string(median[0]));
    RecordProperty("median_projected_bound" + d, std::to_string(median[1]));
    // The query's residual at mean cosine 0.98 is about 0.14 of the query: the typical projected
    // bound is at least twice as tight (the widest is a planted row opposite the mean, whose
    // mu . y columns are large).
    EXPECT_LT(median[1], 0.5 * median[0]) << "D = " << dim;
  }
}

// The filtered batches on anisotropic data: exact (the oracle, and fused bit for bit) with and
// without the centred copies, planted near-ties around the query's best included; centred, they
// redo fewer queries.
TEST(CentredCopy, FilteredBatchesExactWithFewerFallbacks) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const char* family : {"aniso:0.95", "aniso:0.98", "dirs:0.7"}) {
    SCOPED_TRACE(family);
    Model m = make_synthetic_model(30011, 300, seed, make_family(family, 300));
    const Batch b = near_ties_of_row_5(m, 48, seed);
    int plain_fallbacks[2] = {0, 0}, centred_fallbacks[2] = {0, 0};
    for (int centred = 0; centred < 2; ++centred) {
      const CentreSetting setting(centred ? "auto" : "off");
      DeviceModel dm = upload_model(m);
      ASSERT_EQ(prepared_centre(dm).used, centred == 1) << prepared_centre(dm).why;
      int i = 0;
      for (const char* name : {"batch_f16_filter", "batch_i8_filter"}) {
        SCOPED_TRACE(std::string(name) + (centred ? " centred" : " plain"));
        const BatchPipeline& p = batch_pipeline(name);
        if (batch_scan_refusal(*p.scan_row, 300, BatchPolicy::candidates(10), device_status().props.major)) continue;
        BatchSearcher::Options narrow;  // the certificates themselves, not the wide re-rank
        narrow.wide_rerank = false;
        BatchSearcher bs(dm, narrow);
        const auto got = bs.search(p, b.q.data(), b.norms.data(), static_cast<int>(b.norms.size()), 10);
        expect_batch_exact(m, dm, b, got, 10);
        (centred ? centred_fallbacks : plain_fallbacks)[i++] = bs.last_fallbacks();
      }
    }
    for (int i = 0; i < 2; ++i) {
      EXPECT_LE(centred_fallbacks[i], plain_fallbacks[i]) << (i ? "batch_i8_filter" : "batch_f16_filter");
      RecordProperty(std::string(family) + (i ? "_i8" : "_f16") + "_fallbacks_plain_centred",
                     std::to_string(plain_fallbacks[i]) + "/" + std::to_string(centred_fallbacks[i]));
    }
  }
}

// The one-query reduced scans (fp16, bf16, int8) read the centred copies too: exact (the oracle,
// and fused bit for bit), at k = 10 and at k = 100 (the large-k re-rank's certificate), planted
// near-ties included, with fewer queries uncertified; the int8 scan, which certifies nothing on
// such rows without the centre, then certifies most.
TEST(CentredCopy, OneQueryReducedScansExactWithFewerFallbacks) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Model m = make_synthetic_model(30011, 300, seed, make_family("aniso:0.98", 300));
  const Batch b = near_ties_of_row_5(m, 12, seed);
  for (const char* name : {"fused_f16", "fused_bf16", "fused_i8"}) {
    SCOPED_TRACE(name);
    long long uncertified[2] = {0, 0}, certified[2] = {0, 0};
    for (int centred = 0; centred < 2; ++centred) {
      const CentreSetting setting(centred ? "auto" : "off");
      DeviceModel dm = upload_model(m);
      ASSERT_EQ(prepared_centre(dm).used, centred == 1) << prepared_centre(dm).why;
      GpuSearcher searcher(dm, &m);
      for (int k : {10, 100}) {
        SCOPED_TRACE("k = " + std::to_string(k) + (centred ? ", centred" : ", plain"));
        for (std::size_t i = 0; i < b.norms.size(); ++i) {
          const float* q = b.q.data() + i * m.dim;
          const auto got = searcher.search(pipeline(name), q, b.norms[i], k);
          expect_matches_oracle(m, q, got, k);
          const auto ref = searcher.search(pipeline("fused"), q, b.norms[i], k);
          ASSERT_EQ(got.size(), ref.size());
          for (std::size_t r = 0; r < ref.size(); ++r) {
            EXPECT_EQ(got[r].row, ref[r].row) << "query " << i << ", rank " << r;
            EXPECT_EQ(got[r].sim, ref[r].sim) << "query " << i << ", rank " << r;
          }
        }
      }
      uncertified[centred] = searcher.certificate_counts().uncertified;
      certified[centred] = searcher.certificate_counts().certified;
    }
    EXPECT_LE(uncertified[1], uncertified[0]);
    if (std::string(name) == "fused_i8") {
      EXPECT_GT(certified[1], certified[0]);
    }
    RecordProperty(std::string(name) + "_uncertified_plain_centred",
                   std::to_string(uncertified[0]) + "/" + std::to_string(uncertified[1]));
  }
}
