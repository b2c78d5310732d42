// The posting-list study on the CPU: the index and query readers (every bad input one clear
// error), the generators (shapes and determinism) and the serial algorithms against the
// std::set_intersection oracle on random, adversarial and real-shaped data.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <set>
#include <string>

#include "harness/intersect/floor_bytes.hpp"
#include "harness/intersect/generate.hpp"
#include "harness/intersect/index.hpp"
#include "runtime/error.hpp"
#include "variants/intersect/cpu_intersect.hpp"
#include "variants/intersect/cpu_peers.hpp"
#include "variants/intersect/intersect_registry.hpp"
#include "variants/registry_model.hpp"

using namespace distancies;
using namespace distancies::intersect;

namespace {

std::vector<unsigned char> words(std::initializer_list<std::uint32_t> w) {
  std::vector<unsigned char> b;
  for (std::uint32_t v : w)
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
  return b;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(IntersectIndex, ReadsTheStudysFormat) {
  IndexReport rep;
  const PostingIndex ix = parse_index("t", words({3, 1, 5, 9, 0, 2, 4, 0xFFFFFFFFu}), &rep);
  ASSERT_EQ(ix.lists(), 3u);
  EXPECT_EQ(ix.length(0), 3u);
  EXPECT_EQ(ix.length(1), 0u);
  EXPECT_EQ(ix.list(2).ids[1], 0xFFFFFFFFu);
  EXPECT_EQ(ix.max_id, 0xFFFFFFFFu);
  EXPECT_EQ(rep.empty_lists, 1u);  // kept and counted
}

TEST(IntersectIndex, EveryBadInputIsOneClearError) {
  EXPECT_NE(error_of([] {
              parse_index("t", words({3, 1, 5}), nullptr);
            }).find("list 0 at byte 0 says 3 ids but only 2 words"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_index("t", words({1, 7, 3, 1, 5, 4}), nullptr);
            }).find("list 1: ids not increasing (4 after 5) at position 2 (byte 20)"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_index("t", words({2, 5, 5}), nullptr); }).find("duplicate id 5"), std::string::npos);
  auto odd = words({1, 2});
  odd.push_back(0);
  EXPECT_NE(error_of([&] { parse_index("t", odd, nullptr); }).find("not a whole number of uint32 words"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_index("/nonexistent/index.bin"); }).find("cannot open index"), std::string::npos);
}

TEST(IntersectQueries, ReadsUpToFiveTermsAndCountsBlankLines) {
  QueryReport rep;
  const auto q = parse_queries("q", "1 2 3\n\n4\t0  2 1 3\r\n", 5, &rep);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[1].terms, (std::vector<std::uint32_t>{4, 0, 2, 1, 3}));
  EXPECT_EQ(q[1].line, 3);
  EXPECT_EQ(rep.blank_lines, 1u);
  EXPECT_NE(
      error_of([] { parse_queries("q", "1 2\n7 1\n", 5); }).find("q line 2: unknown term 7 (the index has 5 lists"),
      std::string::npos);
  EXPECT_NE(error_of([] { parse_queries("q", "1 2 3 4 0 1\n", 5); }).find("line 1: more than 5 terms"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_queries("q", "1 x\n", 5); }).find("'x' is not a term id"), std::string::npos);
  EXPECT_NE(error_of([] { parse_queries("q", "-1\n", 5); }).find("'-1' is not a term id"), std::string::npos);
}

TEST(IntersectIndex, WritesWhatItReads) {
  const DataSet d = small_set();
  const std::string ip = ::testing::TempDir() + "/isect_index.bin", qp = ::testing::TempDir() + "/isect_q.txt";
  write_index(ip, d.index);
  write_queries(qp, d.queries);
  const PostingIndex back = read_index(ip);
  EXPECT_EQ(back.ids, d.index.ids);
  EXPECT_EQ(back.offsets, d.index.offsets);
  const auto q = read_queries(qp, back.lists());
  ASSERT_EQ(q.size(), d.queries.size());
  EXPECT_EQ(q[17].terms, d.queries[17].terms);
}

TEST(IntersectGenerate, SmallSetHasTheStudysShape) {
  const DataSet d = small_set();
  ASSERT_EQ(d.index.lists(), 1000u);
  ASSERT_EQ(d.queries.size(), 300u);
  for (std::size_t i = 0; i < d.index.lists(); ++i) {
    EXPECT_GE(d.index.length(i), 50u);
    EXPECT_LE(d.index.length(i), 100u);
  }
  for (const Query& q : d.queries) EXPECT_EQ(std::set<std::uint32_t>(q.terms.begin(), q.terms.end()).size(), 5u);
  EXPECT_EQ(small_set().index.ids, d.index.ids);  // deterministic
  EXPECT_NE(small_set(1).index.ids, d.index.ids);
}

TEST(IntersectGenerate, Gov2ShapeHasTheStatedMeanAndMaximum) {
  Gov2Shape s;
  s.lists = 100;  // the full 2,000 lists are the bench's; the shape is the same
  s.queries = 200;
  const DataSet d = gov2_shaped(s);
  EXPECT_EQ(d.index.ids.size(), 1989940u);  // 19,899.4 x 100
  EXPECT_DOUBLE_EQ(d.index.mean_length(), 19899.4);
  EXPECT_EQ(d.index.max_id, 25205174u);
  std::size_t longest = 0, shortest = SIZE_MAX;
  for (std::size_t i = 0; i < d.index.lists(); ++i) {
    longest = std::max(longest, d.index.length(i));
    shortest = std::min(shortest, d.index.length(i));
  }
  EXPECT_GT(longest, 50 * shortest);  // a Zipf-like spread
  for (const Query& q : d.queries) {
    EXPECT_GE(q.terms.size(), 2u);
    EXPECT_LE(q.terms.size(), 5u);
  }
}

void expect_all_serial_exact(const DataSet& d, const std::string& what) {
  const HashTables h = build_hash_tables(d.index);
  for (const IntersectVariant& v : intersect_variants()) {
    if (v.grain != IntersectGrain::Serial) continue;
    for (const Query& q : d.queries) {
      const Lists l = lists_of(d.index, q);
      ASSERT_EQ(v.serial(l, terms_by_length(d.index, q), h), oracle_intersect(l))
          << v.name << " on " << what << " query line " << q.line;
    }
  }
}

TEST(IntersectSerial, OracleIsChainedSetIntersection) {
  PostingIndex ix;
  ix.add({13, 16, 17, 40, 50});  // the study's "2014 NBA Final"
  ix.add({4, 8, 11, 13, 14, 16, 17, 39, 40, 42, 50});
  ix.add({1, 2, 3, 5, 9, 10, 13, 16, 18, 20, 40, 50});
  const Query q{{2, 0, 1}, 1};
  EXPECT_EQ(terms_by_length(ix, q), (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(oracle_intersect(lists_of(ix, q)), (std::vector<std::uint32_t>{13, 16, 40, 50}));
  expect_all_serial_exact({ix, {q}}, "the study's example");
}

TEST(IntersectSerial, ExactOnSmallRandomAndAdversarialSets) {
  expect_all_serial_exact(small_set(), "the small set");
  expect_all_serial_exact(small_set(99), "the small set, seed 99");
  for (auto& [name, d] : adversarial_sets()) expect_all_serial_exact(d, name);
  for (int r : {1, 16, 256}) expect_all_serial_exact(ratio_set(100, r, 20), "ratio " + std::to_string(r));
  for (int t = 1; t <= 5; ++t) expect_all_serial_exact(terms_set(t, 500, 20), std::to_string(t) + " terms");
}

// A GOV2-shaped slice small enough for every CPU row, dense so that answers are not empty.
DataSet gov2_slice() {
  Gov2Shape s;
  s.lists = 60;
  s.queries = 60;
  s.mean_length = 2000;
  s.max_id = 200000;
  return gov2_shaped(s);
}

TEST(IntersectSerial, ExactOnAGov2ShapedSlice) { expect_all_serial_exact(gov2_slice(), "a GOV2-shaped slice"); }

TEST(IntersectSerial, HashBucketsCoverTheIdRange) {
  EXPECT_EQ(hash_bucket(0, 1000), 0u);
  EXPECT_EQ(hash_bucket(1000, 1000), 511u);
  EXPECT_EQ(hash_bucket(0xFFFFFFFFu, 0xFFFFFFFFu), 511u);
}

TEST(IntersectRegistry, RowsAreConsistentAndInTheCatalog) {
  for (const IntersectVariant& v : intersect_variants())
    EXPECT_TRUE(intersect_variant_problems(v).empty()) << intersect_variant_problems(v).front();
  bool listed = false;
  for (const auto& f : registry::catalog())
    if (f.study == "intersect") {
      listed = true;
      EXPECT_TRUE(f.problems().empty());
      EXPECT_EQ(f.entries().size(), intersect_variants().size());
    }
  EXPECT_TRUE(listed);
  EXPECT_NO_THROW(registry::check_all());
  IntersectVariant bad = intersect_variant("svs_coarse");
  bad.name = "svs_fine";
  EXPECT_FALSE(intersect_variant_problems(bad).empty());
  bad = intersect_variant("svs_serial");
  bad.serial = nullptr;
  EXPECT_FALSE(intersect_variant_problems(bad).empty());
  EXPECT_NE(error_of([] { intersect_variant("svs_turbo"); }).find("unknown intersection variant 'svs_turbo'"),
            std::string::npos);
}

// The floor's bytes: a list named twice (by two queries, or twice by one) counts once.
TEST(IntersectFloor, DistinctBytesCountEachListOnce) {
  PostingIndex ix;
  ix.add({1, 2, 3, 4});        // list 0: 16 bytes
  ix.add({2, 4});              // list 1: 8 bytes
  ix.add({1, 2, 3, 4, 5, 6});  // list 2: 24 bytes
  ix.add({7});                 // list 3: 4 bytes, named by no query
  const std::vector<Query> q = {{{0, 1}, 1}, {{1, 2}, 2}, {{0, 2, 0}, 3}};
  const BatchBytes b = batch_bytes(ix, q);
  EXPECT_EQ(b.per_query_sum, (16u + 8) + (8 + 24) + (16 + 24 + 16));
  EXPECT_EQ(b.distinct, 16u + 8 + 24);
  // Shortest lists: 1, 1 and 0; list 1 counts once.
  EXPECT_EQ(b.distinct_shortest, 8u + 16);
  EXPECT_LE(b.distinct_shortest, b.distinct);
  EXPECT_LE(b.distinct, b.per_query_sum);
}

TEST(IntersectFloor, EmptyBatchAndEmptyListsReadNothing) {
  PostingIndex ix;
  ix.add({});
  ix.add({3, 9});
  EXPECT_EQ(batch_bytes(ix, {}).distinct, 0u);
  const BatchBytes b = batch_bytes(ix, {{{0, 1}, 1}});
  EXPECT_EQ(b.distinct, 8u);
  EXPECT_EQ(b.distinct_shortest, 0u);  // the empty list is the shortest: the answer is empty
}

// The GOV2-shaped set: its queries share lists, so the distinct bytes are well under the sum
// over queries (the old floor counted the sum, which the L2's re-reads beat).
TEST(IntersectFloor, Gov2ShapedSharesLists) {
  const DataSet d = gov2_shaped();
  const BatchBytes b = batch_bytes(d.index, d.queries);
  EXPECT_GT(b.distinct, 0u);
  EXPECT_LT(b.distinct, b.per_query_sum);
  EXPECT_GT(b.distinct_shortest, 0u);
  EXPECT_LT(b.distinct_shortest, b.distinct);
  std::printf("gov2-shaped: per-query sum %.1f MB, distinct %.1f MB, distinct shortest %.1f MB\n",
              b.per_query_sum / 1e6, b.distinct / 1e6, b.distinct_shortest / 1e6);
}

// The batch's CPU peers on every core (cpu_peers.hpp): each equal to the oracle, query by query,
// on the small set and on the nasty cases; the pool hands out every query exactly once.
namespace peers {

using distancies::intersect::Answers;

Answers oracle_of(const DataSet& d) {
  Answers a;
  for (const Query& q : d.queries) a.push_back(oracle_intersect(lists_of(d.index, q)));
  return a;
}

// Every allcores row (roaring skipped where it is not built) on 1, 3 and every hardware thread.
void expect_peers_exact(const DataSet& d, const std::string& what) {
  const Answers want = oracle_of(d);
  for (const IntersectVariant& v : intersect_variants()) {
    if (!v.peer || (v.method == IntersectMethod::Roaring && !roaring_built())) continue;
    for (unsigned threads : {1u, 3u, 0u}) {
      const auto peer = v.peer(d.index, threads);
      const Answers got = peer->run(d.queries);
      ASSERT_EQ(got.size(), want.size()) << v.name << " on " << what;
      for (std::size_t q = 0; q < want.size(); ++q)
        ASSERT_EQ(got[q], want[q]) << v.name << " (" << threads << " threads) on " << what << ", query line "
                                   << d.queries[q].line;
    }
  }
}

// Both instruction-set paths of the galloping, query by query, on the calling thread.
void expect_gallop_paths_exact(const DataSet& d, const std::string& what) {
  std::vector<GallopIsa> isas = {GallopIsa::Portable};
  if (best_gallop_isa() == GallopIsa::Avx2) isas.push_back(GallopIsa::Avx2);
  for (GallopIsa isa : isas)
    for (const Query& q : d.queries) {
      const Lists l = lists_of(d.index, q);
      ASSERT_EQ(simd_gallop_intersect(l, isa), oracle_intersect(l)) << isa_name(isa) << " on " << what;
    }
}

DataSet of_lists(const std::vector<std::vector<std::uint32_t>>& lists,
                 const std::vector<std::vector<std::uint32_t>>& qs) {
  DataSet d;
  for (const auto& l : lists) d.index.add(l);
  int line = 0;
  for (const auto& t : qs) d.queries.push_back({t, ++line});
  return d;
}

std::vector<std::uint32_t> range(std::uint32_t from, std::uint32_t count, std::uint32_t step) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t i = 0; i < count; ++i) v.push_back(from + i * step);
  return v;
}

// Empty lists, one term, disjoint, identical, very skewed lengths (matches at the long list's
// ends, in its tail and between whole blocks), ids at 2^32-1 (galloped and block-merged).
DataSet nasty_set() {
  const std::uint32_t top = 0xFFFFFFFFu;
  std::vector<std::uint32_t> huge = range(0, 300000, 3);  // 0 .. 899,997
  huge.push_back(top - 1);
  huge.push_back(top);
  const std::vector<std::uint32_t> tiny = {0, 31, 32, 96, 95, 899997, top};  // not sorted yet
  std::vector<std::uint32_t> t = tiny;
  std::sort(t.begin(), t.end());
  return of_lists({{},
                   huge,
                   t,
                   range(1, 1000, 2),
                   range(0, 1000, 2),
                   range(0, 1000, 2),
                   {top},
                   {top - 1, top},
                   range(top - 40, 41, 1),
                   range(7, 33, 7),
                   {5},
                   range(top - 80, 41, 2)},
                  {{0},
                   {0, 1},
                   {1, 0, 2},
                   {1},
                   {3, 4},
                   {4, 5},
                   {4, 5, 1},
                   {1, 2},
                   {2, 1, 6},
                   {6, 7, 8},
                   {7, 8},
                   {1, 9},
                   {9, 1, 4},
                   {10, 1},
                   {10, 9},
                   {2, 8, 7, 1, 6},
                   {8, 11},
                   {11, 7},
                   {11, 8, 1}});
}

TEST(IntersectPeers, RowsAreRegisteredWithTheirNames) {
  EXPECT_EQ(intersect_variant("roaring_allcores").grain, IntersectGrain::AllCores);
  EXPECT_EQ(intersect_variant("simd_gallop_allcores").method, IntersectMethod::SimdGallop);
  EXPECT_EQ(grain_label(intersect_variant("simd_gallop_allcores")), "allcores");
  IntersectVariant bad = intersect_variant("roaring_allcores");
  bad.peer = nullptr;
  EXPECT_FALSE(intersect_variant_problems(bad).empty());
  bad = intersect_variant("svs_serial");
  bad.peer = intersect_variant("simd_gallop_allcores").peer;
  EXPECT_FALSE(intersect_variant_problems(bad).empty());
  std::printf("simd_gallop path here: %s; CRoaring %s\n", isa_name(best_gallop_isa()),
              roaring_built() ? "built" : "not built");
}

TEST(IntersectPeers, ExactOnTheSmallSetAndTheAdversarialSets) {
  expect_peers_exact(small_set(), "the small set");
  expect_peers_exact(small_set(99), "the small set, seed 99");
  for (auto& [name, d] : adversarial_sets()) expect_peers_exact(d, name);
  for (int r : {1, 16, 256}) expect_peers_exact(ratio_set(100, r, 20), "ratio " + std::to_string(r));
  for (int t = 1; t <= 5; ++t) expect_peers_exact(terms_set(t, 500, 20), std::to_string(t) + " terms");
}

TEST(IntersectPeers, ExactOnTheNastyCases) {
  const DataSet d = nasty_set();
  expect_peers_exact(d, "the nasty cases");
  expect_gallop_paths_exact(d, "the nasty cases");
  expect_gallop_paths_exact(small_set(), "the small set");
  for (int r : {1, 2, 31, 33, 1000}) expect_gallop_paths_exact(ratio_set(37, r, 30), "ratio " + std::to_string(r));
}

TEST(IntersectPeers, ExactOnAGov2ShapedSlice) { expect_peers_exact(gov2_slice(), "a GOV2-shaped slice"); }

TEST(IntersectPeers, EmptyBatchHasNoAnswers) {
  const DataSet d = small_set();
  for (const IntersectVariant& v : intersect_variants()) {
    if (v.peer && (v.method != IntersectMethod::Roaring || roaring_built())) {
      EXPECT_TRUE(v.peer(d.index, 4)->run({}).empty()) << v.name;
    }
  }
}

TEST(IntersectPeers, RoaringSaysWhenItIsNotBuilt) {
  if (roaring_built()) GTEST_SKIP() << "CRoaring is built here";
  EXPECT_NE(error_of([] { make_roaring_peer(small_set().index); }).find("roaring_allcores was not built"),
            std::string::npos);
}

// Each index exactly once, whatever the count against the threads.
TEST(QueryPool, SplitsAnyNumberOfQueries) {
  for (unsigned threads : {1u, 2u, 4u, 0u}) {
    QueryPool pool(threads);
    EXPECT_EQ(pool.threads(), threads ? threads : hardware_threads());
    for (std::size_t n : {0u, 1u, 3u, 7u, 1000u, 10007u}) {
      std::vector<std::atomic<int>> calls(n);
      for (int round = 0; round < 2; ++round)  // the pool is reused batch after batch
        pool.run(n, [&](std::size_t i) { calls[i].fetch_add(1); });
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(calls[i].load(), 2) << n << " queries, " << threads << " threads";
    }
  }
}

TEST(QueryPool, RethrowsAFailedQueryAndKeepsWorking) {
  QueryPool pool(4);
  EXPECT_THROW(pool.run(100,
                        [](std::size_t i) {
                          if (i == 57) throw Error("query 57 failed");
                        }),
               Error);
  std::atomic<int> done{0};
  pool.run(100, [&](std::size_t) { done.fetch_add(1); });
  EXPECT_EQ(done.load(), 100);
}

}  // namespace peers

}  // namespace
