// Streamed and sharded search (docs/scale.md): the answer of every pipeline streamed in chunks,
// or split over ranks and merged, equals the resident search's bit for bit (chunk and shard
// borders, ties across them, k beyond a chunk's or a shard's rows, a last chunk of one row);
// the policy's arithmetic, the merge and the bootstrap on the CPU. GPU tests skip, visibly,
// without a GPU; the NCCL ones also without libnccl.so.2.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>

#include "gpu_skip.hpp"
#include "harness/runtime/device_model.hpp"
#include "harness/runtime/error.hpp"
#include "harness/scale/bootstrap.hpp"
#include "harness/scale/merge_hits.hpp"
#include "harness/scale/shard_search.hpp"
#include "harness/scale/stream_search.hpp"
#include "harness/synthetic.hpp"
#include "oracle_check.hpp"
#include "test_models.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

void expect_same(const std::vector<Hit>& got, const std::vector<Hit>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].row, want[i].row) << what << ", rank " << i;
    EXPECT_EQ(got[i].sim, want[i].sim) << what << ", rank " << i;
  }
}

// The union's top k by brute force: the reference for every merge.
std::vector<Hit> brute_top_k(std::vector<Hit> all, int k) {
  std::sort(all.begin(), all.end(), hit_before);
  if (all.size() > static_cast<std::size_t>(k)) all.resize(static_cast<std::size_t>(k));
  return all;
}

}  // namespace

// ---- The CPU side: split, merge, policy, bootstrap ----

TEST(ShardRows, EvenSplitCoversEveryRowOnce) {
  for (std::int64_t rows : {0, 1, 2, 10, 2196016})
    for (int size : {1, 2, 3, 4, 7}) {
      std::int64_t next = 0, smallest = rows, largest = 0;
      for (int r = 0; r < size; ++r) {
        const auto [lo, hi] = shard_rows(rows, r, size);
        EXPECT_EQ(lo, next) << rows << " rows, rank " << r << " of " << size;
        next = hi;
        smallest = std::min(smallest, hi - lo);
        largest = std::max(largest, hi - lo);
      }
      EXPECT_EQ(next, rows);
      EXPECT_LE(largest - smallest, 1);
    }
}

TEST(MergeGathered, TiesAcrossShardsRankByRowAndPaddingIsIgnored) {
  // Rank 0 holds rows 0-4, rank 1 rows 5-9; k = 4. Equal similarities in both ranks; rank 1 has
  // fewer rows than k (padded with row -1).
  const int k = 4;
  std::vector<ShardHit> g = {
      {0.9f, 4}, {0.5f, 1}, {0.5f, 3}, {0.1f, 0},     // rank 0, query 0
      {0.9f, 5}, {0.5f, 2 + 5}, {0.0f, -1}, {0.0f, -1},  // rank 1, query 0
  };
  const auto got = merge_gathered(g, 2, 1, k);
  ASSERT_EQ(got.size(), 1u);
  const std::vector<Hit> want = {{4, 0.9f}, {5, 0.9f}, {1, 0.5f}, {3, 0.5f}};
  expect_same(got[0], want, "merged");
}

TEST(MergeGathered, EqualsTheUnionsTopKOnRandomTies) {
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 50; ++trial) {
    const int ranks = 1 + rng() % 5, queries = 1 + rng() % 4, k = 1 + rng() % 12;
    std::vector<ShardHit> g(static_cast<std::size_t>(ranks) * queries * k, ShardHit{0, -1});
    std::vector<std::vector<Hit>> all(queries);
    for (int r = 0; r < ranks; ++r)
      for (int q = 0; q < queries; ++q) {
        const int n = rng() % (k + 1);  // some ranks have fewer rows than k
        std::vector<Hit> list;
        for (int i = 0; i < n; ++i) list.push_back({r * 1000 + i, float(rng() % 4) / 4});  // many ties
        std::sort(list.begin(), list.end(), hit_before);
        for (int i = 0; i < n; ++i) g[(static_cast<std::size_t>(r) * queries + q) * k + i] = {list[i].sim, list[i].row};
        all[q].insert(all[q].end(), list.begin(), list.end());
      }
    const auto got = merge_gathered(g, ranks, queries, k);
    for (int q = 0; q < queries; ++q) expect_same(got[q], brute_top_k(all[q], k), "trial " + std::to_string(trial));
  }
}

TEST(StreamPolicy, BudgetSetsTheChunkAndTooLittleIsOneClearError) {
  StreamRequest r;
  r.rows = 2196016;
  r.row_bytes = 300 * 4 + 4;
  r.budget = std::size_t(1) << 30;
  const StreamLayout l = plan_stream(r);
  EXPECT_GE(l.buffers, 2);
  EXPECT_GT(l.chunk_rows, 0);
  EXPECT_EQ(l.chunks, (r.rows + l.chunk_rows - 1) / l.chunk_rows);
  EXPECT_LE(l.slot_bytes * l.buffers, r.budget);
  // A forced chunk size wins; the last chunk may be one row.
  r.chunk_rows = 1000;
  r.rows = 20001;
  const StreamLayout f = plan_stream(r);
  EXPECT_EQ(f.chunk_rows, 1000);
  EXPECT_EQ(f.chunks, 21);
  // Half the budget: smaller chunks, never more than the budget.
  r.chunk_rows = 0;
  r.rows = 2196016;
  r.budget = std::size_t(64) << 20;
  const StreamLayout h = plan_stream(r);
  EXPECT_LE(h.slot_bytes * h.buffers, r.budget);
  EXPECT_LT(h.chunk_rows, l.chunk_rows);
  r.budget = 100;
  try {
    plan_stream(r);
    FAIL() << "a budget of 100 bytes was accepted";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("cannot hold"), std::string::npos) << e.what();
  }
}

TEST(Bootstrap, TwoProcessesShareTheId) {
  char dir[] = "/tmp/distancies-bootstrap-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/nccl.id";
  unsigned char id[128];
  for (int i = 0; i < 128; ++i) id[i] = static_cast<unsigned char>(i * 37 + 11);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // rank 1: waits for the id and checks it
    unsigned char got[128] = {};
    try {
      await_id(path, got, sizeof got, 30.0);
    } catch (...) {
      _exit(2);
    }
    _exit(std::memcmp(got, id, sizeof id) == 0 ? 0 : 1);
  }
  usleep(100 * 1000);  // rank 0 comes late: the other must wait, not fail
  publish_id(path, id, sizeof id);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the id read differs, 2: the wait failed";
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(Bootstrap, AMissingIdIsOneClearErrorAfterTheTimeout) {
  unsigned char id[128];
  try {
    await_id("/tmp/distancies-no-such-dir/nccl.id", id, sizeof id, 0.2);
    FAIL() << "waited for nothing and returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("never published"), std::string::npos) << e.what();
  }
}

TEST(Bootstrap, GpusWithoutALauncherIsOneClearError) {
  unsetenv("DISTANCIES_WORLD_SIZE");
  unsetenv("DISTANCIES_RANK");
  EXPECT_EQ(process_group_from_env(1).size, 1);
  try {
    process_group_from_env(2);
    FAIL() << "--gpus 2 without a launcher was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shard_launch.sh 2"), std::string::npos) << e.what();
  }
  setenv("DISTANCIES_WORLD_SIZE", "2", 1);
  setenv("DISTANCIES_RANK", "1", 1);
  unsetenv("DISTANCIES_NCCL_ID_FILE");
  EXPECT_THROW(process_group_from_env(2), Error);  // no way to share the id
  setenv("DISTANCIES_NCCL_ID_FILE", "/tmp/x.id", 1);
  EXPECT_EQ(process_group_from_env(2).rank, 1);
  EXPECT_EQ(process_group_from_env(2).local_rank, 1);  // one host: the rank is the GPU
  setenv("DISTANCIES_LOCAL_RANK", "0", 1);             // a second host's first GPU
  EXPECT_EQ(process_group_from_env(2).local_rank, 0);
  unsetenv("DISTANCIES_LOCAL_RANK");
  EXPECT_THROW(process_group_from_env(3), Error);  // the launcher started 2
  unsetenv("DISTANCIES_WORLD_SIZE");
  unsetenv("DISTANCIES_RANK");
  unsetenv("DISTANCIES_NCCL_ID_FILE");
}

// ---- Streaming on the GPU ----

namespace {

// 20,001 rows in chunks of 1,000: the last chunk is one row; exact ties of row 0 every 13 rows
// (so across chunk borders) and zero rows.
const ModelSpec kStreamSpec{20001, 300, 0, 5, 40};

struct StreamFixture : ::testing::Test {
  void SetUp() override {
    DISTANCIES_REQUIRE_GPU();
    ModelSpec s = kStreamSpec;
    s.seed = fresh_seed();
    seed = s.seed;
    m = random_model(s);
    // Rows scaled by 2^-2 .. 2^2 in runs of 1,000: each chunk's norms differ from the last's, so
    // a searcher that kept a chunk's norms (or their inverses) for the next would be caught.
    // Powers of two keep the planted ties exact.
    for (std::int64_t r = 0; r < m.rows; ++r) {
      const float f = std::ldexp(1.0f, static_cast<int>((r / 1000) % 5) - 2);
      for (int j = 0; j < m.dim; ++j) m.row(r)[j] *= f;
      m.norms[static_cast<std::size_t>(r)] = vector_norm(m.row(r), m.dim);
    }
    dm = upload_model(m);
  }
  std::uint32_t seed = 0;
  Model m;
  DeviceModel dm;
};

bool streamable(const Pipeline& p) { return !p.habits.copy_model_every_query; }

}  // namespace

TEST_F(StreamFixture, EveryPipelineEqualsTheResidentSearch) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PinnedModel pm = PinnedModel::register_model(m);
  StreamOptions o;
  o.chunk_rows = 1000;
  StreamSearcher st(pm.rows(), o);
  GpuSearcher resident(dm, &m);
  const auto q = random_query(m.dim, seed);
  const float qn = vector_norm(q.data(), m.dim);
  for (const Pipeline& p : pipelines()) {
    if (!streamable(p)) {
      EXPECT_THROW(st.search(p, q.data(), qn, 10), Error) << p.name;
      continue;
    }
    for (int k : {1, 10, 1500}) {  // 1500: more than a chunk's rows
      if (k > 10 && std::string(p.name).rfind("fused", 0) != 0) continue;
      const std::string what = std::string(p.name) + " k=" + std::to_string(k);
      const auto got = st.search(p, q.data(), qn, k);
      expect_same(got, resident.search(p, q.data(), qn, k), what);
      EXPECT_EQ(st.last().layout.chunks, 21) << what;
      EXPECT_EQ(st.last().bytes, static_cast<std::size_t>(m.rows) * (m.ld + 1) * sizeof(float)) << what;
    }
  }
  // The row-0 query: its ties sit in every chunk.
  const auto ties = st.search(pipeline("fused"), m.row(0), m.norms[0], 40);
  expect_matches_oracle(m, m.row(0), ties, 40);
  expect_same(ties, resident.search(pipeline("fused"), m.row(0), m.norms[0], 40), "ties of row 0");
}

TEST_F(StreamFixture, BatchPipelinesEqualTheResidentSearch) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PinnedModel pm = PinnedModel::register_model(m);
  StreamOptions o;
  o.chunk_rows = 4096;  // 20,001 = 4 x 4,096 + 3,617
  o.buffers = 3;
  StreamSearcher st(pm.rows(), o);
  BatchSearcher resident(dm);
  for (int batch : {1, 37}) {
    std::vector<float> qs, norms;
    for (int i = 0; i < batch; ++i) {
      const auto q = i == 0 ? std::vector<float>(m.row(0), m.row(0) + m.dim) : random_query(m.dim, seed + 31 * i);
      qs.insert(qs.end(), q.begin(), q.end());
      norms.push_back(vector_norm(q.data(), m.dim));
    }
    for (const BatchPipeline& p : batch_pipelines()) {
      const std::string what = std::string(p.name) + " batch " + std::to_string(batch);
      const auto got = st.search(p, qs.data(), norms.data(), batch, 10);
      const auto want = resident.search(p, qs.data(), norms.data(), batch, 10);
      ASSERT_EQ(got.size(), want.size()) << what;
      for (int i = 0; i < batch; ++i) expect_same(got[i], want[i], what + " query " + std::to_string(i));
    }
  }
}

TEST_F(StreamFixture, AMemoryLimitOfHalfTheModelStreamsInSeveralChunks) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PinnedModel pm = PinnedModel::register_model(m);
  StreamOptions o;
  o.gpu_memory_limit = pm.rows().vector_bytes() / 2;
  StreamSearcher st(pm.rows(), o);
  const auto q = random_query(m.dim, seed + 1);
  const float qn = vector_norm(q.data(), m.dim);
  const auto got = st.search(pipeline("fused"), q.data(), qn, 10);
  EXPECT_GE(st.last().layout.chunks, 3);
  EXPECT_LE(st.last().layout.slot_bytes * st.last().layout.buffers, o.gpu_memory_limit);
  expect_matches_oracle(m, q.data(), got, 10);
  GpuSearcher resident(dm, &m);
  expect_same(got, resident.search(pipeline("fused"), q.data(), qn, 10), "half the memory");
}

TEST(PinnedModel, SyntheticEqualsTheHostGenerator) {
  DISTANCIES_REQUIRE_GPU();
  const std::int64_t rows = (std::int64_t(1) << 20) + 77;  // two generation blocks, the second short
  const Model host = make_synthetic_model(rows, 50, 12345);
  const PinnedModel pm = PinnedModel::synthetic(rows, 50, 12345);
  ASSERT_EQ(pm.rows().rows, rows);
  EXPECT_EQ(std::memcmp(pm.rows().vectors, host.vectors.data(), pm.rows().vector_bytes()), 0);
  EXPECT_EQ(std::memcmp(pm.rows().norms, host.norms.data(), rows * sizeof(float)), 0);
}

// ---- Sharding ----

// G ranks emulated on one GPU: each shard resident, its top k with global rows, merged as the
// ranks merge the all-gather. Equal to one GPU for G = 2, 3, 7 (k beyond a shard's rows at G = 7
// on a model of 20 rows).
TEST(Shard, EmulatedRanksEqualOneGpu) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (const ModelSpec& spec : {ModelSpec{20001, 300, seed, 5, 40}, ModelSpec{20, 50, seed, 1, 1}}) {
    const Model m = random_model(spec);
    const DeviceModel dm = upload_model(m);
    GpuSearcher one(dm, &m);
    const HostRows all = host_rows(m);
    const int k = 10;
    const std::vector<float> q(m.row(0), m.row(0) + m.dim);  // ties in every shard
    const float qn = m.norms[0];
    for (int ranks : {2, 3, 7}) {
      std::vector<ShardHit> gathered(static_cast<std::size_t>(ranks) * k, ShardHit{0, -1});
      for (int r = 0; r < ranks; ++r) {
        const auto [lo, hi] = shard_rows(m.rows, r, ranks);
        const DeviceModel shard = upload_rows(all.slice(lo, hi));
        GpuSearcher local(shard, nullptr);
        auto hits = local.search(pipeline("fused_f16"), q.data(), qn, k);
        offset_rows(hits, lo);
        for (std::size_t i = 0; i < hits.size(); ++i) gathered[r * k + i] = {hits[i].sim, hits[i].row};
      }
      expect_same(merge_gathered(gathered, ranks, 1, k)[0], one.search(pipeline("fused_f16"), q.data(), qn, k),
                  std::to_string(ranks) + " ranks, " + std::to_string(m.rows) + " rows");
    }
  }
}

// The real code path with one rank: NCCL communicator, resident and streamed shards.
TEST(Shard, OneRankOverNcclEqualsTheResidentSearch) {
  DISTANCIES_REQUIRE_GPU();
  std::string why;
  if (!nccl_available(&why)) GTEST_SKIP() << "no NCCL: " << why;
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = random_model({20001, 300, seed, 5, 40});
  const DeviceModel dm = upload_model(m);
  GpuSearcher one(dm, &m);
  BatchSearcher many(dm);
  NcclComm comm(ProcessGroup{});
  const PinnedModel pm = PinnedModel::register_model(m);
  for (bool stream : {false, true}) {
    ShardOptions o;
    o.stream = stream;
    o.stream_options.chunk_rows = 3000;
    ShardSearcher sh(comm, pm.rows(), o);
    EXPECT_EQ(sh.streamed(), stream);
    const auto q = random_query(m.dim, seed);
    const float qn = vector_norm(q.data(), m.dim);
    expect_same(sh.search(pipeline("fused"), q.data(), qn, 10), one.search(pipeline("fused"), q.data(), qn, 10),
                stream ? "streamed shard" : "resident shard");
    std::vector<float> qs(q);
    qs.insert(qs.end(), m.row(0), m.row(0) + m.dim);
    const float norms[2] = {qn, m.norms[0]};
    const auto got = sh.search(batch_pipeline("batch_f16_h"), qs.data(), norms, 2, 10);
    const auto want = many.search(batch_pipeline("batch_f16_h"), qs.data(), norms, 2, 10);
    for (int i = 0; i < 2; ++i) expect_same(got[i], want[i], "batch query " + std::to_string(i));
  }
}
