// Every registered dot variant, top-k stage and pipeline against the fp64 oracle, on fresh
// random models and on the nasty cases. Skips (visibly) without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include "gpu_skip.hpp"
#include "harness/embeddings/gpu_search.hpp"
#include "harness/synthetic.hpp"
#include "oracle_check.hpp"
#include "runtime/device_model.hpp"
#include "test_models.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/registry.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

struct Case {
  const char* name;
  ModelSpec spec;
  int k;
  bool query_is_row0;  // exact ties among row 0's duplicates
};

// Rows not a multiple of any block, rows < k, zero vectors, duplicated rows, D = 7/50/300/301/777.
const Case kCases[] = {
    {"d300", {20011, 300, 0, 0, 0}, 10, false},
    {"d50", {4099, 50, 0, 0, 0}, 10, false},
    {"d301", {3001, 301, 0, 0, 0}, 10, false},
    {"d7", {777, 7, 0, 0, 0}, 16, false},
    {"d777", {2003, 777, 0, 0, 0}, 10, false},  // several rounds of every scan's columns
    {"rows_lt_k", {5, 300, 0, 0, 0}, 10, false},
    {"one_row", {1, 40, 0, 0, 0}, 3, false},
    {"zero_rows", {2049, 300, 0, 64, 0}, 10, false},
    {"ties", {3000, 300, 0, 0, 40}, 25, true},
    {"k128", {10007, 96, 0, 0, 0}, 128, false},
    {"k200", {5003, 300, 0, 0, 0}, 200, false},
    // The large-k select, with 40 exact copies of row 0 among the rows (not the query: at ranks in
    // the thousands fp32 near-ties may order differently from fp64, which the tie check would flag).
    {"k4096", {9001, 64, 0, 0, 40}, 4096, false},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string case_name(const ::testing::TestParamInfo<std::tuple<std::string, Case>>& i) {
  return std::get<0>(i.param) + "_" + std::get<1>(i.param).name;
}

std::vector<std::string> names_of_dots() {
  std::vector<std::string> v;
  for (const auto& d : dot_variants()) v.push_back(d.name);
  return v;
}
std::vector<std::string> names_of_pipelines() {
  std::vector<std::string> v;
  for (const auto& p : pipelines()) v.push_back(p.name);
  return v;
}

Model model_for(const Case& c, std::uint32_t seed) {
  ModelSpec s = c.spec;
  s.seed = seed;
  return random_model(s);
}

std::vector<float> query_for(const Case& c, const Model& m, std::uint32_t seed) {
  if (c.query_is_row0) return std::vector<float>(m.row(0), m.row(0) + m.dim);
  return random_query(m.dim, seed);
}

}  // namespace

class DotVariantTest : public ::testing::TestWithParam<std::tuple<std::string, Case>> {};

TEST_P(DotVariantTest, EverySimilarityMatchesFp64) {
  DISTANCIES_REQUIRE_GPU();
  const auto& [name, c] = GetParam();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = model_for(c, seed);
  const auto q = query_for(c, m, seed);
  DeviceModel dm = upload_model(m);
  Workspace ws;
  ws.allocate(static_cast<int>(m.rows), 1, m.dim, 0);
  CUDA_CHECK(cudaMemcpy(ws.query.get(), q.data(), q.size() * sizeof(float), cudaMemcpyHostToDevice));
  // Poison the outputs: every row must be written.
  CUDA_CHECK(cudaMemset(ws.sims.get(), 0xFF, ws.capacity * sizeof(float)));
  CUDA_CHECK(cudaMemset(ws.idx.get(), 0xFF, ws.capacity * sizeof(int)));
  const DotArgs args{dm.d_vectors(),
                     dm.d_norms(),
                     static_cast<int>(m.rows),
                     m.dim,
                     m.ld,
                     ws.query.as<float>(),
                     vector_norm(q.data(), m.dim),
                     ws.sims.as<float>(),
                     ws.idx.as<int>()};
  dot_variant(name).launch(args, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> sims(static_cast<std::size_t>(m.rows));
  std::vector<int> idx(static_cast<std::size_t>(m.rows));
  CUDA_CHECK(cudaMemcpy(sims.data(), ws.sims.get(), sims.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(idx.data(), ws.idx.get(), idx.size() * sizeof(int), cudaMemcpyDeviceToHost));
  const auto truth = oracle_similarities(m, q.data());
  int bad = 0;
  for (std::size_t r = 0; r < sims.size() && bad < 5; ++r) {
    if (idx[r] != static_cast<int>(r) || !(std::abs(sims[r] - truth[r]) <= kSimTolerance)) {
      ++bad;
      ADD_FAILURE() << "row " << r << ": idx " << idx[r] << " sim " << sims[r] << " vs fp64 " << truth[r];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, DotVariantTest,
                         ::testing::Combine(::testing::ValuesIn(names_of_dots()), ::testing::ValuesIn(kCases)),
                         case_name);

class PipelineTest : public ::testing::TestWithParam<std::tuple<std::string, Case>> {};

TEST_P(PipelineTest, TopKMatchesOracle) {
  DISTANCIES_REQUIRE_GPU();
  const auto& [name, c] = GetParam();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = model_for(c, seed);
  const auto q = query_for(c, m, seed);
  DeviceModel dm = upload_model(m);
  GpuSearcher searcher(dm, &m);
  Breakdown bd;
  const auto hits = searcher.search(pipeline(name), q.data(), vector_norm(q.data(), m.dim), c.k, &bd);
  expect_matches_oracle(m, q.data(), hits, c.k);
  if (c.query_is_row0) {  // exact ties: row order decides, so rows must match exactly
    const auto oracle = oracle_search(m, q.data(), c.k);
    for (std::size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i].row, oracle[i].row) << "rank " << i;
  }
  EXPECT_GT(bd.total_ms, 0.0f);
  EXPECT_GT(bd.kernel_ms(), 0.0f);
  EXPECT_EQ(bd.stage_ms("dot") > 0.0f, pipeline(name).dot != nullptr)
      << "a dot stage is timed iff the pipeline has one";
  // A second query through the same searcher reuses its workspace (V4) and must agree.
  const auto again = searcher.search(pipeline(name), q.data(), vector_norm(q.data(), m.dim), c.k);
  ASSERT_EQ(again.size(), hits.size());
  for (std::size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(again[i].row, hits[i].row);
}

INSTANTIATE_TEST_SUITE_P(Registry, PipelineTest,
                         ::testing::Combine(::testing::ValuesIn(names_of_pipelines()), ::testing::ValuesIn(kCases)),
                         case_name);

// Each top-k stage alone (after the stage it needs) on similarities with many exact ties.
class TopkStageTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(TopkStageTest, SelectsExactlyTheBestKInOrder) {
  DISTANCIES_REQUIRE_GPU();
  const auto& [name, k] = GetParam();
  const TopkStage& stage = topk_stage(name);
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int n : {1, 7, 1000, 65537}) {
    std::mt19937 rng(seed + n);
    std::uniform_int_distribution<int> level(0, 200);  // few distinct values: ties everywhere
    std::vector<float> sims(static_cast<std::size_t>(n));
    std::vector<int> idx(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      sims[i] = level(rng) / 100.0f - 1.0f;
      idx[i] = i;
    }
    Workspace ws;
    ws.allocate(n, k, 1, stage.temp_bytes(n, k));
    CUDA_CHECK(cudaMemcpy(ws.sims.get(), sims.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(ws.idx.get(), idx.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    TopkState st = ws.topk_state();
    if (stage.after) topk_stage(stage.after).run(st, nullptr);
    stage.run(st, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    const int kk = std::min(k, n);
    std::vector<float> got_s(static_cast<std::size_t>(kk));
    std::vector<int> got_i(static_cast<std::size_t>(kk));
    CUDA_CHECK(cudaMemcpy(got_s.data(), st.sims, kk * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(got_i.data(), st.idx, kk * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<int> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sims[a] > sims[b]; });
    for (int i = 0; i < kk; ++i) {
      EXPECT_EQ(got_i[i], order[i]) << "n " << n << " rank " << i;
      EXPECT_EQ(got_s[i], sims[order[i]]) << "n " << n << " rank " << i;
    }
  }
}

std::vector<std::string> names_of_final_stages() {
  std::vector<std::string> v;
  for (const auto& t : topk_stages())
    if (t.output == StageData::TopK && !t.reads_model)  // works on a similarity array, leaves the top k
      v.push_back(t.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Registry, TopkStageTest,
                         ::testing::Combine(::testing::ValuesIn(names_of_final_stages()),
                                            ::testing::Values(1, 10, 128, 129, 1024, 4096, 5000)));

// NaN similarities never rank (ranks_before): the large-k select leaves them out like the lists
// do, and fills the places left over with sentinels.
TEST(LargeK, NanSimilaritiesAreNeverChosen) {
  DISTANCIES_REQUIRE_GPU();
  const int n = 1000, k = 300;
  std::vector<float> sims(n), want;
  std::vector<int> idx(n), want_rows;
  for (int i = 0; i < n; ++i) {
    sims[i] = i % 10 ? std::numeric_limits<float>::quiet_NaN() : static_cast<float>(i % 7);  // 100 real, ties
    idx[i] = i;
  }
  std::vector<int> order;
  for (int i = 0; i < n; ++i)
    if (sims[i] == sims[i]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sims[a] > sims[b]; });
  for (const char* name : {"warp_select", "radix_select"}) {
    SCOPED_TRACE(name);
    const TopkStage& stage = topk_stage(name);
    Workspace ws;
    ws.allocate(n, k, 1, stage.temp_bytes(n, k));
    CUDA_CHECK(cudaMemcpy(ws.sims.get(), sims.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(ws.idx.get(), idx.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    TopkState st = ws.topk_state();
    stage.run(st, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> got_s(k);
    std::vector<int> got_i(k);
    CUDA_CHECK(cudaMemcpy(got_s.data(), st.sims, k * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(got_i.data(), st.idx, k * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < k; ++i) {
      if (i < static_cast<int>(order.size())) {
        EXPECT_EQ(got_i[i], order[i]) << "rank " << i;
        EXPECT_EQ(got_s[i], sims[order[i]]) << "rank " << i;
      } else {
        EXPECT_EQ(got_i[i], kSentinelRow) << "rank " << i;
      }
    }
  }
}

TEST(FirstMerge, SortsEveryChunkAndPadsTheLast) {
  DISTANCIES_REQUIRE_GPU();
  const int n = 1003, k = 10;
  std::mt19937 rng(fresh_seed());
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> sims(n);
  std::vector<int> idx(n);
  for (int i = 0; i < n; ++i) sims[i] = u(rng), idx[i] = i;
  Workspace ws;
  ws.allocate(n, k, 1, 0);
  CUDA_CHECK(cudaMemcpy(ws.sims.get(), sims.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(ws.idx.get(), idx.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  TopkState st = ws.topk_state();
  topk_stage("first_merge").run(st, nullptr);
  EXPECT_EQ(st.chunks, 101);
  std::vector<float> out(ws.capacity);
  std::vector<int> oi(ws.capacity);
  CUDA_CHECK(cudaMemcpy(out.data(), st.sims, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(oi.data(), st.idx, oi.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int c = 0; c < st.chunks; ++c) {
    std::vector<float> want;
    for (int i = c * k; i < std::min(n, (c + 1) * k); ++i) want.push_back(sims[i]);
    std::sort(want.begin(), want.end(), std::greater<float>());
    for (int i = 0; i < k; ++i) {
      if (i < static_cast<int>(want.size())) {
        EXPECT_EQ(out[c * k + i], want[i]);
        EXPECT_EQ(sims[oi[c * k + i]], out[c * k + i]);
      } else {
        EXPECT_EQ(oi[c * k + i], kSentinelRow) << "short last chunk must be padded";
      }
    }
  }
}

TEST(SyntheticOnDevice, BitForBitTheHostModel) {
  DISTANCIES_REQUIRE_GPU();
  const Model host = make_synthetic_model(3001, 301, 99);
  DeviceModel dm = generate_synthetic_on_device(3001, 301, 99);
  const Model back = download_model(dm);
  ASSERT_EQ(back.ld, host.ld);
  EXPECT_EQ(0, std::memcmp(back.vectors.data(), host.vectors.data(), host.rows * host.ld * sizeof(float)));
  EXPECT_EQ(back.norms, host.norms);
}

TEST(GpuSearcher, QueryWordsAreExcludedUnlessKept) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = make_synthetic_model(5000, 64, 5);
  DeviceModel dm = upload_model(m, false);
  GpuSearcher searcher(dm, &m);
  const Query q = make_query(m, "king - man + woman");
  const auto hits = searcher.search(pipeline("V4"), q, 10, false);
  expect_matches_oracle(m, q.vector.data(), hits, 10, q.word_rows);
  const auto kept = searcher.search(pipeline("V4"), q, 10, true);
  expect_matches_oracle(m, q.vector.data(), kept, 10);
}

TEST(GpuSearcher, OutOfMemoryIsAClearError) {
  DISTANCIES_REQUIRE_GPU();
  try {
    DeviceBuffer huge(std::size_t(1) << 50, "a petabyte");
    ADD_FAILURE() << "a petabyte was allocated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU out of memory: a petabyte needs"), std::string::npos) << e.what();
  }
  // The context is still usable afterwards.
  DeviceBuffer small(1024, "small");
  EXPECT_NE(small.get(), nullptr);
}

TEST(ReadFloor, ReadsEveryByte) {
  DISTANCIES_REQUIRE_GPU();
  const std::size_t n = (std::size_t(1) << 22) + 4;  // not a multiple of the grid
  std::vector<float> ones(n, 1.0f);
  DeviceBuffer d(n * sizeof(float), "data");
  CUDA_CHECK(cudaMemcpy(d.get(), ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  DeviceBuffer sink(static_cast<std::size_t>(floor_sink_len()) * sizeof(float), "sink");
  launch_read_floor(d.get(), n * sizeof(float), sink.as<float>(), nullptr);
  std::vector<float> partial(static_cast<std::size_t>(floor_sink_len()));
  CUDA_CHECK(cudaMemcpy(partial.data(), sink.get(), partial.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double total = 0;
  for (float p : partial) total += p;
  EXPECT_EQ(total, double(n));
}

// The 16-bit pipelines re-rank in fp32 with the fused scan's arithmetic: their answer is the
// fused fp32 pipeline's, bit for bit, whenever the bound certifies it.
TEST(ReducedPrecision, EqualsTheFp32FusedPipelineExactly) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = random_model({50021, 300, seed, 10, 0});
  const auto q = random_query(300, seed);
  DeviceModel dm = upload_model(m);
  GpuSearcher searcher(dm, &m);
  for (int k : {1, 10, 64, 100, 129, 1024, 4096}) {
    const auto want = searcher.search(pipeline("fused"), q.data(), vector_norm(q.data(), 300), k);
    for (const char* name : {"fused_f16", "fused_bf16", "fused_i8"}) {
      Breakdown bd;
      const auto got = searcher.search(pipeline(name), q.data(), vector_norm(q.data(), 300), k, &bd);
      ASSERT_EQ(got.size(), want.size()) << name << " k " << k;
      for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].row, want[i].row) << name << " k " << k << " rank " << i;
        EXPECT_EQ(got[i].sim, want[i].sim) << name << " k " << k << " rank " << i;
      }
      // Random data certifies: with the lists (K = 64 at k <= 10) and with the large-k select
      // (K = max(4k, k + 512) above k = 32), the gap between the k-th and the K-th similarity of
      // Gaussian rows is far wider than every copy's bound (int8's per-row term included).
      EXPECT_EQ(bd.stage_ms("fallback"), 0.0f) << name << ": random data should certify at k " << k;
    }
  }
}

// Rows that differ from the query by far less than the 16-bit error bound cannot be told apart
// by the reduced scan: the certificate must fail and the fallback must answer, exactly.
TEST(ReducedPrecision, NearTiesFallBackToFp32) {
  DISTANCIES_REQUIRE_GPU();
  Model m = random_model({4000, 64, 11, 0, 0});
  std::mt19937 rng(fresh_seed());
  std::uniform_real_distribution<float> tiny(-1e-4f, 1e-4f);
  for (int r = 1; r < 300; ++r) {
    for (int j = 0; j < 64; ++j) m.row(r)[j] = m.row(0)[j] + tiny(rng);
    m.norms[static_cast<std::size_t>(r)] = vector_norm(m.row(r), 64);
  }
  const std::vector<float> q(m.row(0), m.row(0) + 64);
  DeviceModel dm = upload_model(m);
  GpuSearcher searcher(dm, &m);
  const auto want = searcher.search(pipeline("fused"), q.data(), vector_norm(q.data(), 64), 10);
  for (const char* name : {"fused_bf16", "fused_i8"}) {
    Breakdown bd;
    const auto hits = searcher.search(pipeline(name), q.data(), vector_norm(q.data(), 64), 10, &bd);
    EXPECT_GT(bd.stage_ms("fallback"), 0.0f) << name << ": near-ties inside the bound must not be certified";
    expect_matches_oracle(m, q.data(), hits, 10);
    ASSERT_EQ(hits.size(), want.size());
    for (std::size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i].row, want[i].row) << name;
  }
}

TEST(ReducedPrecision, Fp16OverflowFallsBack) {
  DISTANCIES_REQUIRE_GPU();
  Model m = random_model({1000, 32, 5, 0, 0});
  m.row(7)[3] = 1e6f;  // beyond fp16's 65504
  m.norms[7] = vector_norm(m.row(7), 32);
  const auto q = random_query(32, 5);
  DeviceModel dm = upload_model(m);
  EXPECT_TRUE(prepared_reduced(dm, Storage::F16).out_of_range);
  EXPECT_FALSE(prepared_reduced(dm, Storage::BF16).out_of_range);
  GpuSearcher searcher(dm, &m);
  expect_matches_oracle(m, q.data(), searcher.search(pipeline("fused_f16"), q.data(), vector_norm(q.data(), 32), 10),
                        10);
}
