// The reduced-precision pipelines at the edges of fp32 (issue 21): the audit's counterexamples
// (subnormal products, huge norms, NaN), models flagged `normalized`, and the certification rate
// on real and synthetic models. Every answer must be exactly `fused`'s; what the bound cannot
// cover is refused by the range guard and counted. Skips (visibly) without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

#include "gpu_skip.hpp"
#include "harness/embeddings/batch_search.hpp"
#include "harness/embeddings/gpu_search.hpp"
#include "harness/formats.hpp"
#include "harness/synthetic.hpp"
#include "oracle_check.hpp"
#include "real_model.hpp"
#include "runtime/device_model.hpp"
#include "test_models.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/precision.hpp"
#include "variants/embeddings/registry.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

// The same bits (NaN equal to NaN), the same rows.
void expect_same(const std::vector<Hit>& got, const std::vector<Hit>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].row, want[i].row) << what << " rank " << i;
    std::uint32_t a, b;
    std::memcpy(&a, &got[i].sim, 4);
    std::memcpy(&b, &want[i].sim, 4);
    EXPECT_TRUE(a == b || (std::isnan(got[i].sim) && std::isnan(want[i].sim)))
        << what << " rank " << i << ": " << got[i].sim << " instead of fused's " << want[i].sim;
  }
}

Model gaussian_model(std::int64_t rows, int dim, double scale, std::uint32_t seed) {
  Model m = random_model({rows, dim, seed, 0, 0});
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0, 1);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (int j = 0; j < dim; ++j) m.row(r)[j] = static_cast<float>(g(rng) * scale);
    m.norms[static_cast<std::size_t>(r)] = vector_norm(m.row(r), dim);
  }
  return m;
}

// Every 16-bit one-query pipeline and every batch pipeline answer the queries exactly like
// `fused`; returns how many 16-bit queries the range guard refused.
long long expect_all_like_fused(const Model& m, const std::vector<std::vector<float>>& queries, int k) {
  DeviceModel dm = upload_model(m);
  GpuSearcher one(dm, &m);
  std::vector<std::vector<Hit>> want;
  std::vector<float> packed, norms;
  for (const auto& q : queries) {
    const float qn = vector_norm(q.data(), m.dim);
    want.push_back(one.search(pipeline("fused"), q.data(), qn, k));
    packed.insert(packed.end(), q.begin(), q.end());
    norms.push_back(qn);
  }
  for (const auto& p : pipelines()) {
    if (p.storage == Storage::F32) continue;
    for (std::size_t i = 0; i < queries.size(); ++i)
      expect_same(one.search(p, queries[i].data(), norms[i], k), want[i],
                  std::string(p.name) + " query " + std::to_string(i));
  }
  BatchSearcher batch(dm);
  for (const auto& p : batch_pipelines()) {
    const auto got = batch.search(p, packed.data(), norms.data(), static_cast<int>(queries.size()), k);
    for (std::size_t i = 0; i < queries.size(); ++i)
      expect_same(got[i], want[i], std::string(p.name) + " query " + std::to_string(i));
    if (!p.per_query) {
      EXPECT_EQ(batch.last_refused(), batch.last_fallbacks()) << p.name << ": the guard is what sent them back";
    }
  }
  return one.certificate_counts().refused;
}

// One-query pipelines that read a reduced copy (each refusal is counted once per query).
long long reduced_pipelines() {
  long long n = 0;
  for (const auto& p : pipelines()) n += p.storage != Storage::F32;
  return n;
}

}  // namespace

// D = 300, query components all 2^-75, one row 2^-75 (1 + 2^-9 - 2^-20) among 300 ordinary rows,
// k = 1: `fused` scores that row 2.0 (subnormal arithmetic); the bf16 scan scored it 0 and
// certified a wrong top 1 before the guard.
TEST(RangeGuard, AuditCounterexampleAnswersLikeFused) {
  DISTANCIES_REQUIRE_GPU();
  const int dim = 300;
  Model m = gaussian_model(301, dim, 1.0, 21);
  for (int j = 0; j < dim; ++j) m.row(300)[j] = 0x1p-75f * (1 + 0x1p-9f - 0x1p-20f);
  m.norms[300] = vector_norm(m.row(300), dim);
  const std::vector<std::vector<float>> q = {std::vector<float>(dim, 0x1p-75f)};
  const long long refused = expect_all_like_fused(m, q, 1);
  EXPECT_EQ(reduced_pipelines(), 3) << "fused_f16, fused_bf16, fused_i8";
  EXPECT_EQ(refused, reduced_pipelines()) << "every reduced-copy pipeline refused, counted";
  DeviceModel dm = upload_model(m);
  GpuSearcher s(dm, &m);
  const auto top = s.search(pipeline("fused"), q[0].data(), vector_norm(q[0].data(), dim), 1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].row, 300);
  EXPECT_EQ(top[0].sim, 2.0f);
}

// A Gaussian model scaled to entries ~3e-23 (the audit: 314 of 2,000 rows beyond the bf16 bound).
TEST(RangeGuard, TinyGaussianAnswersLikeFused) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = gaussian_model(2000, 300, 3e-23, 7);
  std::vector<std::vector<float>> q;
  for (int r : {0, 5, 1234}) q.emplace_back(m.row(r), m.row(r) + m.dim);
  EXPECT_EQ(expect_all_like_fused(m, q, 10), reduced_pipelines() * 3) << "3 queries, each refused by each";
}

// Norms ~1e19 and ~3e19: |q||x| near or past FLT_MAX, Inf and NaN on the fp32 path itself.
TEST(RangeGuard, HugeNormsAnswerLikeFused) {
  DISTANCIES_REQUIRE_GPU();
  for (double norm : {1e19, 3e19}) {
    SCOPED_TRACE("norms ~" + std::to_string(norm));
    const Model m = gaussian_model(3000, 300, norm / std::sqrt(300.0), 9);
    std::vector<std::vector<float>> q;
    for (int r : {0, 77}) q.emplace_back(m.row(r), m.row(r) + m.dim);
    EXPECT_EQ(expect_all_like_fused(m, q, 10), reduced_pipelines() * 2) << "2 queries, each refused by each";
  }
}

// A NaN in the model (the loaders reject one; an in-memory model can carry it): its norm is
// NaN, the guard refuses, and no NaN is ever ranked first.
TEST(RangeGuard, NanRowAnswersLikeFused) {
  DISTANCIES_REQUIRE_GPU();
  Model m = random_model({5000, 64, 3, 0, 0});
  m.row(17)[5] = NAN;
  m.norms[17] = vector_norm(m.row(17), 64);
  const std::vector<std::vector<float>> q = {std::vector<float>(m.row(17), m.row(17) + 64),
                                             std::vector<float>(m.row(18), m.row(18) + 64)};
  std::vector<std::vector<float>> finite_q = {q[1]};
  expect_all_like_fused(m, finite_q, 10);
  DeviceModel dm = upload_model(m);
  GpuSearcher s(dm, &m);
  for (const char* name : {"fused_f16", "fused_bf16", "fused_i8"}) {
    const auto hits = s.search(pipeline(name), q[1].data(), vector_norm(q[1].data(), 64), 10);
    ASSERT_FALSE(hits.empty());
    EXPECT_FALSE(std::isnan(hits[0].sim)) << name;
    for (const Hit& h : hits) EXPECT_NE(h.row, 17) << name << ": the NaN row ranked";
  }
}

// NaN inside the guard's reach: a row with a NaN element but a finite stored norm (so the guard
// lets the query through) scores NaN on both paths. The 16-bit scan keeps it as a candidate
// (approx_rank_key), the re-rank never places it, and the certificate fails, with many rows and
// with fewer rows than K (every row seen); the runner then answers exactly like `fused`.
TEST(Certificate, NanCandidateNeverCertifiesOnTheGpu) {
  DISTANCIES_REQUIRE_GPU();
  for (std::int64_t rows : {20, 3000}) {
    SCOPED_TRACE(std::to_string(rows) + " rows");
    Model m = random_model({rows, 64, 8, 0, 0});
    m.row(17)[5] = NAN;
    m.norms[17] = 1.0f;
    const std::vector<float> q(m.row(3), m.row(3) + 64);
    const float qn = vector_norm(q.data(), 64);
    DeviceModel dm = upload_model(m);
    ASSERT_TRUE(reduced_in_range(qn, dm.norm_range()));
    for (Storage st : {Storage::F16, Storage::BF16}) {
      SCOPED_TRACE(storage_name(st));
      const int n = static_cast<int>(rows), k = 5;
      const TopkStage& scan = topk_stage("reduced_scan_topk");
      const TopkStage& rerank = topk_stage("exact_rerank");
      Workspace ws;
      ws.allocate(n, k, 64, std::max(scan.temp_bytes(n, k), rerank.temp_bytes(n, k)));
      CUDA_CHECK(cudaMemcpy(ws.query.get(), q.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
      const DotArgs args{dm.d_vectors(),      dm.d_norms(),    n, 64, dm.ld, ws.query.as<float>(), qn,
                         ws.sims.as<float>(), ws.idx.as<int>()};
      TopkState s = ws.topk_state();
      s.n = n;
      s.k = k;
      s.model.dot = &args;
      s.model.reduced = prepared_reduced(dm, st).data.get();
      s.model.storage = st;
      s.model.reduced_ld = reduced_leading_dim(64);
      s.model.error_bound = reduced_error_bound(st, 64, q.data(), qn, prepared_reduced(dm, st).min_norm);
      scan.run(s, nullptr);
      rerank.run(s, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      int status = 0;
      float top_s[5];
      int top_r[5];
      CUDA_CHECK(cudaMemcpy(&status, s.status, sizeof status, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(top_s, s.sims, sizeof top_s, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(top_r, s.idx, sizeof top_r, cudaMemcpyDeviceToHost));
      EXPECT_EQ(status, 1) << "a NaN candidate must not certify";
      EXPECT_FALSE(std::isnan(top_s[0]));
      EXPECT_NE(top_r[0], 17) << "a NaN is never ranked first";
    }
    GpuSearcher g(dm, &m);
    const auto want = g.search(pipeline("fused"), q.data(), qn, 5);
    for (const char* name : {"fused_f16", "fused_bf16", "fused_i8"})
      expect_same(g.search(pipeline(name), q.data(), qn, 5), want, name);
    EXPECT_EQ(g.certificate_counts().uncertified, 3);
    EXPECT_EQ(g.certificate_counts().refused, 0);
  }
}

// A native model flagged `normalized`: every pipeline, one-query and batch, searches the unit
// rows with their own norms (the fp64 oracle's cosines), not the stored original norms.
TEST(NormalizedFlag, EveryPipelineSearchesUnitRows) {
  DISTANCIES_REQUIRE_GPU();
  const auto dir = std::filesystem::temp_directory_path() / ("distancies_ngpu_" + std::to_string(fresh_seed()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "n.dst").string();
  Model w = random_model({6007, 300, 4, 3, 0});
  for (std::int64_t i = 0; i < w.rows; ++i) {
    const float n = w.norms[static_cast<std::size_t>(i)];
    if (n > 0)
      for (int j = 0; j < w.dim; ++j) w.row(i)[j] /= n;
    w.norms[static_cast<std::size_t>(i)] = n * (1.0f + static_cast<float>(i % 3));  // originals unlike 1
  }
  w.normalized = true;
  save_native(w, path);
  const Model m = load_model(path);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(m.normalized);
  DeviceModel dm = upload_model(m);
  GpuSearcher one(dm, &m);
  BatchSearcher batch(dm);
  const std::vector<int> rows = {0, 100, 4321};
  std::vector<float> packed, norms;
  for (int r : rows) {
    packed.insert(packed.end(), m.row(r), m.row(r) + m.dim);
    norms.push_back(vector_norm(m.row(r), m.dim));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const float* q = packed.data() + i * m.dim;
    const auto want = one.search(pipeline("fused"), q, norms[i], 10);
    EXPECT_EQ(want[0].row, rows[i]);
    for (const auto& p : pipelines()) {
      SCOPED_TRACE(p.name);
      const auto hits = one.search(p, q, norms[i], 10);
      expect_matches_oracle(m, q, hits, 10);
      EXPECT_LE(hits[0].sim, 1.0f + 1e-6f);
    }
  }
  for (const auto& p : batch_pipelines()) {
    SCOPED_TRACE(p.name);
    const auto got = batch.search(p, packed.data(), norms.data(), static_cast<int>(rows.size()), 10);
    for (std::size_t i = 0; i < rows.size(); ++i) expect_matches_oracle(m, packed.data() + i * m.dim, got[i], 10);
    EXPECT_EQ(batch.last_refused(), 0);
  }
}

// The certification rate: every word (or an even sample) as a query, k = 10 plus the word
// itself, through fused_f16 / fused_bf16 / fused_i8 and every tiled batch pipeline. Prints the certified
// fraction and the fallbacks; asserts that the range guard never fires on these models, that a
// sample answers exactly like `fused`, and a sane lower bound on the rate.
// DISTANCIES_CERT_QUERIES: queries per model, an even sample of the rows (default 20000; "all":
// every row).
namespace {

std::int64_t one_query_budget(std::int64_t rows) {
  const char* env = std::getenv("DISTANCIES_CERT_QUERIES");
  if (env && std::string(env) == "all") return rows;
  const std::int64_t n = env && *env ? std::atoll(env) : 20000;
  return std::max<std::int64_t>(1, std::min(rows, n));
}

void measure_certification(const std::string& label, const Model& m, DeviceModel& dm) {
  const int k = 11;
  const std::int64_t n1 = one_query_budget(m.rows);
  const std::int64_t stride = std::max<std::int64_t>(1, m.rows / n1);
  GpuSearcher fused(dm, &m);
  for (const char* name : {"fused_f16", "fused_bf16", "fused_i8"}) {
    GpuSearcher s(dm, &m);
    long long checked = 0;
    for (std::int64_t r = 0, i = 0; r < m.rows && i < n1; r += stride, ++i) {
      const auto hits = s.search(pipeline(name), m.row(r), m.norms[static_cast<std::size_t>(r)], k);
      if (i % 97 == 0) {
        expect_same(hits, fused.search(pipeline("fused"), m.row(r), m.norms[static_cast<std::size_t>(r)], k),
                    label + " " + name + " row " + std::to_string(r));
        ++checked;
      }
    }
    const auto& c = s.certificate_counts();
    const long long total = c.certified + c.uncertified + c.refused;
    std::printf(
        "certification %s %s: %lld queries, certified %.4f %% (%lld), %lld fallbacks, %lld refused by the "
        "range guard (%lld checked against fused)\n",
        label.c_str(), name, total, 100.0 * c.certified / std::max(total, 1ll), c.certified, c.uncertified, c.refused,
        checked);
    EXPECT_EQ(c.refused, 0) << name;
    EXPECT_GE(c.certified, 0.8 * total) << name;
  }
  // The same sample of rows, 1,024 queries per batch.
  std::vector<std::int64_t> sample;
  for (std::int64_t r = 0; r < m.rows && static_cast<std::int64_t>(sample.size()) < n1; r += stride)
    sample.push_back(r);
  BatchSearcher batch(dm);
  const std::size_t B = 1024;
  for (const auto& p : batch_pipelines()) {
    if (p.per_query) continue;
    long long total = 0, fallbacks = 0, refused = 0;
    std::vector<float> packed, norms;
    for (std::size_t first = 0; first < sample.size(); first += B) {
      const std::size_t n = std::min(B, sample.size() - first);
      packed.clear();
      norms.clear();
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t r = sample[first + i];
        packed.insert(packed.end(), m.row(r), m.row(r) + m.dim);
        norms.push_back(m.norms[static_cast<std::size_t>(r)]);
      }
      const auto got = batch.search(p, packed.data(), norms.data(), static_cast<int>(n), k);
      total += static_cast<long long>(n);
      fallbacks += batch.last_fallbacks();
      refused += batch.last_refused();
      expect_same(got[0], fused.search(pipeline("fused"), packed.data(), norms[0], k),
                  label + " " + p.name + " row " + std::to_string(sample[first]));
    }
    std::printf(
        "certification %s %s: %lld queries, certified %.4f %%, %lld fallbacks, %lld refused by the range guard\n",
        label.c_str(), p.name, total, 100.0 * (total - fallbacks) / std::max(total, 1ll), fallbacks, refused);
    EXPECT_EQ(refused, 0) << p.name;
    EXPECT_GE(total - fallbacks, 0.8 * total) << p.name;
  }
}

}  // namespace

TEST(Certification, RateOnTheRealGloveModel) {
  DISTANCIES_REQUIRE_GPU();
  const std::string path = real_model_path();
  if (path.empty()) GTEST_SKIP() << "real GloVe model absent: run scripts/fetch_glove.sh";
  const Model m = load_model(path);
  DeviceModel dm = upload_model(m);
  measure_certification("glove.6B.50d", m, dm);
}

TEST(Certification, RateOnTheSyntheticModel) {
  DISTANCIES_REQUIRE_GPU();
  // The benchmark's synthetic model (GloVe 840B's shape), generated on the GPU.
  DeviceModel dm = generate_synthetic_on_device(kGloveRows, 300, kDefaultSeed);
  const Model m = download_model(dm);
  measure_certification("synthetic", m, dm);
}

// Every way a model reaches the GPU measures its norm range once, where its norms are written,
// equal to the host's (zero rows and a non-finite norm included); reading it afterwards never
// launches, and a model nobody measured refuses to answer rather than guess.
TEST(NormRange, EveryBuilderMeasuresItOnce) {
  DISTANCIES_REQUIRE_GPU();
  Model m = random_model({3001, 40, 12, 0, 0});
  m.norms[7] = 0.0f;
  const NormRange want = host_norm_range(m.norms.data(), m.rows);
  const auto expect_range = [&](const DeviceModel& dm, const NormRange& w, const char* how) {
    SCOPED_TRACE(how);
    const NormRange& got = dm.norm_range();
    EXPECT_EQ(got.min_norm, w.min_norm);
    EXPECT_EQ(got.max_norm, w.max_norm);
    EXPECT_EQ(got.finite, w.finite);
    EXPECT_EQ(&dm.norm_range(), &got) << "read, not measured again";
  };
  expect_range(upload_model(m, true), want, "upload_model, pinned");
  expect_range(upload_model(m, false), want, "upload_model, pageable");
  const DeviceModel gen = generate_synthetic_on_device(5000, 40, 3);
  const Model host = download_model(gen);
  expect_range(gen, host_norm_range(host.norms.data(), host.rows), "generate_synthetic_on_device");
  m.norms[11] = INFINITY;
  expect_range(upload_model(m), host_norm_range(m.norms.data(), m.rows), "a non-finite norm");
  EXPECT_THROW(DeviceModel{}.norm_range(), std::logic_error);
}
