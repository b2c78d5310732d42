// Streamed and sharded search (docs/scale.md): the answer of every pipeline streamed in chunks,
// or split over ranks and merged, equals the resident search's bit for bit (chunk and shard
// borders, ties across them, k beyond a chunk's or a shard's rows, a last chunk of one row);
// the policy's arithmetic, the merge and the bootstrap on the CPU. GPU tests skip, visibly,
// without a GPU; the NCCL ones also without libnccl.so.2.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <thread>
#include <utility>

#include "gpu_skip.hpp"
#include "harness/scale/bootstrap.hpp"
#include "harness/scale/merge_hits.hpp"
#include "harness/scale/rendezvous.hpp"
#include "harness/scale/shard_search.hpp"
#include "harness/scale/stream_search.hpp"
#include "harness/synthetic.hpp"
#include "oracle_check.hpp"
#include "runtime/device_model.hpp"
#include "runtime/error.hpp"
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
      {0.9f, 4}, {0.5f, 1},     {0.5f, 3},  {0.1f, 0},   // rank 0, query 0
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

// A queries split's answers come back rank by rank, each rank's block padded to the largest
// share and each list to k: laid end to end, every query gets its own list and the padding goes.
TEST(ConcatenateGathered, EachRanksAnswersLandOnItsQueries) {
  for (const int batch : {0, 1, 5, 7, 1024})
    for (const int ranks : {1, 2, 3, 7}) {
      const int k = 3, per = (batch + ranks - 1) / ranks;
      std::vector<ShardHit> g(static_cast<std::size_t>(ranks) * per * k, ShardHit{0, -1});
      for (int r = 0; r < ranks; ++r) {
        const auto [lo, hi] = shard_rows(batch, r, ranks);
        for (int i = 0; i < hi - lo; ++i)
          for (int j = 0; j < (lo + i) % (k + 1); ++j)  // some lists shorter than k
            g[(static_cast<std::size_t>(r) * per + i) * k + j] = {1.0f - 0.1f * j, static_cast<int>((lo + i) * 10 + j)};
      }
      const auto got = concatenate_gathered(g, ranks, per, batch, k);
      ASSERT_EQ(got.size(), static_cast<std::size_t>(batch));
      for (int q = 0; q < batch; ++q) {
        const std::string what =
            std::to_string(ranks) + " ranks, query " + std::to_string(q) + " of " + std::to_string(batch);
        ASSERT_EQ(got[q].size(), static_cast<std::size_t>(q % (k + 1))) << what;
        for (int j = 0; j < q % (k + 1); ++j) EXPECT_EQ(got[q][j].row, q * 10 + j) << what;
      }
    }
  EXPECT_THROW(concatenate_gathered(std::vector<ShardHit>(5), 2, 1, 2, 3), Error) << "the wrong size";
}

// Replicas split a batch by queries from kSplitQueriesFrom queries (Auto) or as asked; a rank
// holding only its rows always splits by rows.
TEST(SplitFor, ReplicasChooseByTheBatchAndShardsSplitByRows) {
  EXPECT_EQ(split_for(Split::Auto, true, kSplitQueriesFrom - 1), Split::Rows);
  EXPECT_EQ(split_for(Split::Auto, true, kSplitQueriesFrom), Split::Queries);
  EXPECT_EQ(split_for(Split::Queries, true, 1), Split::Queries);
  EXPECT_EQ(split_for(Split::Rows, true, 8192), Split::Rows);
  for (const Split asked : {Split::Auto, Split::Queries, Split::Rows})
    EXPECT_EQ(split_for(asked, false, 8192), Split::Rows);
  EXPECT_STREQ(split_name(Split::Queries), "queries");
}

// The exchange merges on the GPU (merge_lists_kernel): bit for bit the host merge, ties across
// shards, padding, k from 1 to 200, 1 to 8 ranks, up to 1,024 queries.
TEST(MergeGathered, OnTheDeviceEqualsTheHostMerge) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::vector<ShardHit> ties = {{0.9f, 4}, {0.5f, 1}, {0.5f, 3},  {0.1f, 0},
                                      {0.9f, 5}, {0.5f, 7}, {0.0f, -1}, {0.0f, -1}};
  expect_same(merge_gathered_on_device(ties, 2, 1, 4)[0], merge_gathered(ties, 2, 1, 4)[0], "ties");
  for (int trial = 0; trial < 40; ++trial) {
    const int ranks = 1 + rng() % 8, queries = trial < 4 ? 1024 : 1 + rng() % 40;
    const int k = trial % 5 == 0 ? 200 : 1 + rng() % 12;
    std::vector<ShardHit> g(static_cast<std::size_t>(ranks) * queries * k, ShardHit{0, -1});
    for (int r = 0; r < ranks; ++r)
      for (int q = 0; q < queries; ++q) {
        const int n = rng() % (k + 1);
        std::vector<Hit> list;
        for (int i = 0; i < n; ++i) list.push_back({r * 100000 + i, float(rng() % 4) / 4});
        std::sort(list.begin(), list.end(), hit_before);
        for (int i = 0; i < n; ++i) g[(static_cast<std::size_t>(r) * queries + q) * k + i] = {list[i].sim, list[i].row};
      }
    const auto host = merge_gathered(g, ranks, queries, k);
    const auto device = merge_gathered_on_device(g, ranks, queries, k);
    ASSERT_EQ(device.size(), host.size());
    for (int q = 0; q < queries; ++q)
      expect_same(device[q], host[q], "trial " + std::to_string(trial) + " query " + std::to_string(q));
  }
  EXPECT_THROW(merge_gathered_on_device(ties, 2, 1, 3), Error);
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

namespace {
// Unsets every launcher's variables (the tests set their own).
void clear_launch_env() {
  for (const char* v : {"DISTANCIES_RANK",
                        "DISTANCIES_WORLD_SIZE",
                        "DISTANCIES_LOCAL_RANK",
                        "DISTANCIES_RENDEZVOUS",
                        "DISTANCIES_JOB_TOKEN",
                        "DISTANCIES_RENDEZVOUS_TIMEOUT",
                        "OMPI_COMM_WORLD_RANK",
                        "OMPI_COMM_WORLD_SIZE",
                        "OMPI_COMM_WORLD_LOCAL_RANK",
                        "OMPI_MCA_ess_base_jobid",
                        "PMIX_NAMESPACE",
                        "SLURM_PROCID",
                        "SLURM_NTASKS",
                        "SLURM_LOCALID",
                        "SLURM_JOB_ID",
                        "SLURM_STEP_ID",
                        "RANK",
                        "WORLD_SIZE",
                        "LOCAL_RANK",
                        "MASTER_ADDR",
                        "MASTER_PORT",
                        "TORCHELASTIC_RUN_ID"})
    unsetenv(v);
}
struct LaunchEnv {
  LaunchEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    clear_launch_env();
    for (const auto& [k, v] : vars) setenv(k, v, 1);
  }
  ~LaunchEnv() { clear_launch_env(); }
};
}  // namespace

TEST(Bootstrap, EveryLauncherNamesTheRanks) {
  {
    const LaunchEnv e({{"OMPI_COMM_WORLD_RANK", "1"},
                       {"OMPI_COMM_WORLD_SIZE", "2"},
                       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                       {"OMPI_MCA_ess_base_jobid", "42"},
                       {"DISTANCIES_RENDEZVOUS", "10.0.0.1:29600"}});
    const ProcessGroup g = process_group_from_env(2);
    EXPECT_EQ(g.launcher, "mpirun");
    EXPECT_EQ(g.rank, 1);
    EXPECT_EQ(g.local_rank, 1);
    EXPECT_EQ(g.rendezvous, "10.0.0.1:29600");
    EXPECT_EQ(g.token, "ompi-42");
  }
  {
    const LaunchEnv e({{"SLURM_PROCID", "3"},
                       {"SLURM_NTASKS", "4"},
                       {"SLURM_LOCALID", "1"},
                       {"SLURM_JOB_ID", "77"},
                       {"SLURM_STEP_ID", "2"},
                       {"MASTER_ADDR", "node7"},
                       {"MASTER_PORT", "29500"}});
    const ProcessGroup g = process_group_from_env(4);
    EXPECT_EQ(g.launcher, "srun");
    EXPECT_EQ(g.rank, 3);
    EXPECT_EQ(g.local_rank, 1);  // the second GPU of its host
    EXPECT_EQ(g.rendezvous, "node7:29500");
    EXPECT_EQ(g.token, "slurm-77.2");
  }
  {
    const LaunchEnv e({{"RANK", "0"},
                       {"WORLD_SIZE", "2"},
                       {"LOCAL_RANK", "0"},
                       {"MASTER_ADDR", "127.0.0.1"},
                       {"MASTER_PORT", "29500"},
                       {"TORCHELASTIC_RUN_ID", "abc"},
                       {"DISTANCIES_RENDEZVOUS_TIMEOUT", "7.5"}});
    const ProcessGroup g = process_group_from_env(2);
    EXPECT_EQ(g.launcher, "torchrun");
    EXPECT_EQ(g.rendezvous, "127.0.0.1:29501") << "torchrun's own store holds MASTER_PORT";
    EXPECT_EQ(g.token, "torchrun-abc");
    EXPECT_EQ(g.timeout_s, 7.5);
  }
  {  // an explicit identity and token win over the launcher's
    const LaunchEnv e({{"DISTANCIES_RANK", "1"},
                       {"DISTANCIES_WORLD_SIZE", "2"},
                       {"RANK", "0"},
                       {"WORLD_SIZE", "2"},
                       {"DISTANCIES_RENDEZVOUS", "127.0.0.1:4000"},
                       {"DISTANCIES_JOB_TOKEN", "s3cret"},
                       {"TORCHELASTIC_RUN_ID", "abc"}});
    const ProcessGroup g = process_group_from_env(2);
    EXPECT_EQ(g.launcher, "shard_launch.sh");
    EXPECT_EQ(g.rank, 1);
    EXPECT_EQ(g.token, "s3cret");
  }
}

TEST(Bootstrap, AJobWithoutLauncherAddressOrTokenIsOneClearError) {
  auto error_of = [](int gpus) -> std::string {
    try {
      process_group_from_env(gpus);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  {
    const LaunchEnv e({});
    EXPECT_EQ(process_group_from_env(1).size, 1);
    EXPECT_NE(error_of(2).find("shard_launch.sh 2"), std::string::npos) << error_of(2);
    EXPECT_NE(error_of(2).find("torchrun"), std::string::npos) << error_of(2);
  }
  {
    const LaunchEnv e({{"DISTANCIES_RANK", "1"}, {"DISTANCIES_WORLD_SIZE", "2"}, {"DISTANCIES_JOB_TOKEN", "t"}});
    EXPECT_NE(error_of(2).find("DISTANCIES_RENDEZVOUS"), std::string::npos) << error_of(2);
    EXPECT_NE(error_of(3).find("started 2"), std::string::npos) << error_of(3);
  }
  {
    const LaunchEnv e({{"DISTANCIES_RANK", "1"}, {"DISTANCIES_WORLD_SIZE", "2"}, {"DISTANCIES_RENDEZVOUS", "h:1"}});
    EXPECT_NE(error_of(2).find("DISTANCIES_JOB_TOKEN"), std::string::npos) << error_of(2);
  }
  for (const char* bad : {"nohost", ":80", "h:0", "h:65536", "h:8x", "h:"}) {
    const LaunchEnv e({{"DISTANCIES_RANK", "1"},
                       {"DISTANCIES_WORLD_SIZE", "2"},
                       {"DISTANCIES_RENDEZVOUS", bad},
                       {"DISTANCIES_JOB_TOKEN", "t"}});
    EXPECT_NE(error_of(2).find("HOST:PORT"), std::string::npos) << bad << ": " << error_of(2);
  }
  {
    const LaunchEnv e({{"DISTANCIES_RANK", "2"}, {"DISTANCIES_WORLD_SIZE", "2"}});
    EXPECT_NE(error_of(2).find("not below"), std::string::npos) << error_of(2);
  }
  {
    const LaunchEnv e({{"DISTANCIES_RANK", "x"}, {"DISTANCIES_WORLD_SIZE", "2"}});
    EXPECT_NE(error_of(2).find("not a rank"), std::string::npos) << error_of(2);
  }
}

TEST(Rendezvous, LinesRoundTripAndMalformedOnesAreRefused) {
  std::string why;
  const auto h =
      parse_rendezvous_hello(rendezvous_hello("tok", 3, 4).substr(0, rendezvous_hello("tok", 3, 4).size() - 1), &why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->token, "tok");
  EXPECT_EQ(h->rank, 3);
  EXPECT_EQ(h->size, 4);
  for (const char* bad :
       {"", "hello", "distancies-rendezvous 1 tok 1", "distancies-rendezvous 2 tok 1 2",
        "distancies-rendezvous 1 tok 0 2", "distancies-rendezvous 1 tok 2 2", "distancies-rendezvous 1 tok 01 2",
        "distancies-rendezvous 1 tok -1 2", "distancies-rendezvous 1 tok 1 1", "distancies-rendezvous 1 tok 1 99999",
        "distancies-rendezvous 1  1 2", "distancies-rendezvous 1 tok 1 2 extra", "distancies-rendezvous 1 tok\x01 1 2"})
    EXPECT_FALSE(parse_rendezvous_hello(bad, &why)) << bad;
  unsigned char id[128], got[128];
  for (int i = 0; i < 128; ++i) id[i] = static_cast<unsigned char>(i * 37 + 11);
  const std::string ok = rendezvous_ok(id, sizeof id);
  ASSERT_TRUE(parse_rendezvous_reply(ok.substr(0, ok.size() - 1), got, sizeof got, &why)) << why;
  EXPECT_EQ(0, std::memcmp(id, got, sizeof id));
  EXPECT_FALSE(parse_rendezvous_reply("ok 00", got, sizeof got, &why));
  EXPECT_FALSE(parse_rendezvous_reply(std::string("ok ") + std::string(256, 'g'), got, sizeof got, &why));
  EXPECT_FALSE(parse_rendezvous_reply("error not this job's token", got, sizeof got, &why));
  EXPECT_NE(why.find("not this job's token"), std::string::npos) << why;
}

namespace {
// A raw connection to the rendezvous: sends `text`, returns rank 0's one-line answer.
std::string ask(int port, const std::string& text) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return "connect failed";
  }
  if (!text.empty()) (void)!::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}
}  // namespace

// Rank 0 serves three ranks, each in its own process with its own temporary folder (they meet
// only through the port); strays before and between them (garbage, another job's token, a
// duplicate rank, a wrong world size, a connection that says nothing) get one error line each and
// change nothing.
TEST(Rendezvous, RanksInSeparateProcessesGetTheIdAndStraysAnError) {
  unsigned char id[128];
  for (int i = 0; i < 128; ++i) id[i] = static_cast<unsigned char>(255 - i);
  std::atomic<int> port{0};
  std::string served_error;
  std::thread rank0([&] {
    try {
      serve_rendezvous("127.0.0.1:0", "job-7", 4, id, sizeof id, 30.0, [&](int p) { port = p; });
    } catch (const Error& e) {
      served_error = e.what();
    }
  });
  while (port == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(ask(port, "GET / HTTP/1.0\r\n\r\n").rfind("error ", 0), 0u);
  EXPECT_NE(ask(port, rendezvous_hello("job-8", 1, 4)).find("not this job's token"), std::string::npos);
  EXPECT_NE(ask(port, rendezvous_hello("job-7", 1, 3)).find("has 4 ranks"), std::string::npos);
  EXPECT_EQ(ask(port, std::string(600, 'x')).rfind("error ", 0), 0u);
  const std::string address = "127.0.0.1:" + std::to_string(port.load());
  std::vector<pid_t> kids;
  for (int r = 1; r < 4; ++r) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      char dir[] = "/tmp/distancies-rank-XXXXXX";
      if (!mkdtemp(dir) || chdir(dir) != 0) _exit(3);
      unsigned char got[128] = {};
      try {
        fetch_rendezvous(address, "job-7", r, 4, got, sizeof got, 20.0);
      } catch (...) {
        _exit(2);
      }
      rmdir(dir);
      _exit(std::memcmp(got, id, sizeof id) == 0 ? 0 : 1);
    }
    kids.push_back(child);
    if (r == 1) {  // rank 1 again, once it has been served: refused
      int status = 0;
      ASSERT_EQ(waitpid(child, &status, 0), child);
      ASSERT_TRUE(WIFEXITED(status));
      EXPECT_EQ(WEXITSTATUS(status), 0) << "rank 1: 1 the id differs, 2 the fetch failed";
      kids.pop_back();
      EXPECT_NE(ask(port, rendezvous_hello("job-7", 1, 4)).find("already fetched"), std::string::npos);
    }
  }
  for (pid_t k : kids) {
    int status = 0;
    ASSERT_EQ(waitpid(k, &status, 0), k);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: the id differs, 2: the fetch failed";
  }
  rank0.join();
  EXPECT_EQ(served_error, "");
}

TEST(Rendezvous, AMissingRankOrRankZeroIsOneClearErrorAfterTheTimeout) {
  unsigned char id[128] = {};
  try {
    serve_rendezvous("127.0.0.1:0", "t", 3, id, sizeof id, 0.3);
    FAIL() << "served nobody and returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank(s) 1, 2 never came"), std::string::npos) << e.what();
  }
  try {
    fetch_rendezvous("127.0.0.1:1", "t", 1, 2, id, sizeof id, 0.3);
    FAIL() << "fetched from nobody";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("found no rank 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(serve_rendezvous("127.0.0.1:0", "has space", 2, id, sizeof id, 0.1), Error);
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
      // The fp32 rows, or a reduced copy streamed from host memory (test_stream_copy.cpp): fewer bytes.
      const std::size_t fp32_bytes = static_cast<std::size_t>(m.rows) * (m.ld + 1) * sizeof(float);
      if (p.storage == Storage::F32)
        EXPECT_EQ(st.last().bytes, fp32_bytes) << what;
      else
        EXPECT_LT(st.last().bytes, fp32_bytes) << what;
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
    DeviceModel dm = upload_model(m);
    GpuSearcher one(dm, &m);
    const HostRows all = host_rows(m);
    const int k = 10;
    const std::vector<float> q(m.row(0), m.row(0) + m.dim);  // ties in every shard
    const float qn = m.norms[0];
    for (int ranks : {2, 3, 7}) {
      std::vector<ShardHit> gathered(static_cast<std::size_t>(ranks) * k, ShardHit{0, -1});
      for (int r = 0; r < ranks; ++r) {
        const auto [lo, hi] = shard_rows(m.rows, r, ranks);
        DeviceModel shard = upload_rows(all.slice(lo, hi));
        GpuSearcher local(shard, nullptr);
        auto hits = local.search(pipeline("fused_f16"), q.data(), qn, k);
        offset_rows(hits, lo);
        for (std::size_t i = 0; i < hits.size(); ++i) gathered[r * k + i] = {hits[i].sim, hits[i].row};
      }
      const auto want = one.search(pipeline("fused_f16"), q.data(), qn, k);
      const std::string what = std::to_string(ranks) + " ranks, " + std::to_string(m.rows) + " rows";
      expect_same(merge_gathered(gathered, ranks, 1, k)[0], want, what);
      expect_same(merge_gathered_on_device(gathered, ranks, 1, k)[0], want, what + ", merged on the GPU");
    }
  }
}

// A rank given only its rows (read alone from a native file, docs/scale.md): rows 7,000-13,999
// of 20,001, one rank over NCCL; its answers are the search of those rows with global row numbers,
// and the batch path's the same; a shard outside its model is one error.
TEST(Shard, ARankGivenOnlyItsRowsAnswersWithGlobalRows) {
  DISTANCIES_REQUIRE_GPU();
  std::string why;
  if (!nccl_available(&why)) GTEST_SKIP() << "no NCCL: " << why;
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = random_model({20001, 300, seed, 5, 40});
  const std::int64_t first = 7000, last = 14000;
  const HostRows mine = host_rows(m).slice(first, last);
  DeviceModel part = upload_rows(mine);
  GpuSearcher one(part, nullptr);
  NcclComm comm(ProcessGroup{});
  ShardSearcher sh(comm, mine, first, m.rows, ShardOptions{});
  EXPECT_EQ(sh.first_row(), first);
  EXPECT_EQ(sh.shard_rows(), last - first);
  const auto q = random_query(m.dim, seed);
  const float qn = vector_norm(q.data(), m.dim);
  auto want = one.search(pipeline("fused"), q.data(), qn, 10);
  offset_rows(want, first);
  expect_same(sh.search(pipeline("fused"), q.data(), qn, 10), want, "one query");
  const auto got = sh.search(batch_pipeline("batch_f16_h"), q.data(), &qn, 1, 10);
  expect_same(got[0], want, "a batch of one");
  EXPECT_THROW(ShardSearcher(comm, mine, 15000, m.rows, ShardOptions{}), Error);
}

namespace {
// The real NCCL path with one rank, beside the resident searchers of the same 20,001 x 300 model;
// skipped, visibly, without a GPU or libnccl.so.2.
class OneRankOverNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    DISTANCIES_REQUIRE_GPU();
    std::string why;
    if (!nccl_available(&why)) GTEST_SKIP() << "no NCCL: " << why;
    m = random_model({20001, 300, seed, 5, 40});
    dm = std::make_unique<DeviceModel>(upload_model(m));
    one_gpu = std::make_unique<GpuSearcher>(*dm, &m);
    many_gpu = std::make_unique<BatchSearcher>(*dm);
  }
  const std::uint32_t seed = fresh_seed();
  Model m;
  std::unique_ptr<DeviceModel> dm;
  std::unique_ptr<GpuSearcher> one_gpu;
  std::unique_ptr<BatchSearcher> many_gpu;
};
}  // namespace

// The real code path with one rank: NCCL communicator, resident and streamed shards.
TEST_F(OneRankOverNccl, ShardsEqualTheResidentSearch) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  GpuSearcher& one = *one_gpu;
  BatchSearcher& many = *many_gpu;
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

// Replicas over the real NCCL path with one rank (every row resident, the rows split through a
// view of them, the queries split over every row) and G ranks of a queries split emulated on one
// GPU (each rank's share of the batch searched, the answers laid end to end): the batch's answers
// equal one GPU's bit for bit, planted ties included; a replica cannot be streamed nor given only
// its rows.
TEST_F(OneRankOverNccl, ReplicaSplitsEqualOneGpu) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  GpuSearcher& one = *one_gpu;
  BatchSearcher& many = *many_gpu;
  const int batch = 37, k = 10;
  std::vector<float> qs, norms;
  for (int i = 0; i < batch; ++i) {
    const auto q = i % 5 == 0 ? std::vector<float>(m.row(i), m.row(i) + m.dim) : random_query(m.dim, seed + i);
    qs.insert(qs.end(), q.begin(), q.end());
    norms.push_back(vector_norm(q.data(), m.dim));
  }
  const BatchPipeline& p = batch_pipeline("batch_f16_h");
  const auto want = many.search(p, qs.data(), norms.data(), batch, k);
  NcclComm comm(ProcessGroup{});
  ShardSearcher sh(comm, upload_model(m));
  ASSERT_TRUE(sh.replicated());
  EXPECT_EQ(sh.shard_rows(), m.rows);
  for (const Split sp : {Split::Rows, Split::Queries, Split::Auto}) {
    sh.set_split(sp);
    const auto got = sh.search(p, qs.data(), norms.data(), batch, k);
    EXPECT_EQ(sh.last_split(), split_for(sp, true, batch));
    ASSERT_EQ(got.size(), want.size());
    for (int i = 0; i < batch; ++i)
      expect_same(got[i], want[i], std::string("split ") + split_name(sp) + ", query " + std::to_string(i));
  }
  expect_same(sh.search(pipeline("fused"), qs.data(), norms[0], k),
              one.search(pipeline("fused"), qs.data(), norms[0], k), "one query");
  for (const int ranks : {2, 3, 7}) {
    const int per = (batch + ranks - 1) / ranks;
    std::vector<ShardHit> gathered(static_cast<std::size_t>(ranks) * per * k, ShardHit{0, -1});
    for (int r = 0; r < ranks; ++r) {
      const auto [lo, hi] = shard_rows(batch, r, ranks);
      const auto part = many.search(p, qs.data() + lo * m.dim, norms.data() + lo, static_cast<int>(hi - lo), k);
      for (std::size_t i = 0; i < part.size(); ++i)
        for (std::size_t j = 0; j < part[i].size(); ++j)
          gathered[(static_cast<std::size_t>(r) * per + i) * k + j] = {part[i][j].sim, part[i][j].row};
    }
    const auto got = concatenate_gathered(gathered, ranks, per, batch, k);
    for (int i = 0; i < batch; ++i)
      expect_same(got[i], want[i], std::to_string(ranks) + " ranks emulated, query " + std::to_string(i));
  }
  ShardOptions replica;
  replica.replicate = true;
  ShardSearcher from_host(comm, host_rows(m), replica);  // the CLI's way: uploaded from the host
  from_host.set_split(Split::Queries);
  const auto got = from_host.search(p, qs.data(), norms.data(), batch, k);
  for (int i = 0; i < batch; ++i) expect_same(got[i], want[i], "uploaded replica, query " + std::to_string(i));
  EXPECT_THROW(ShardSearcher(comm, host_rows(m).slice(0, 100), 0, m.rows, replica), Error);
  replica.stream = true;
  EXPECT_THROW(ShardSearcher(comm, host_rows(m), replica), Error);
}
