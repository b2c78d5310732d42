// Every GPU intersection variant returns exactly the oracle's ids, in order, for every query:
// on the study's small set, random sets of every list-length ratio and query length, the
// adversarial sets, a GOV2-shaped set at full scale, and with the index in explicit and in
// managed memory.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "harness/intersect/generate.hpp"
#include "harness/intersect/gpu_intersect.hpp"
#include "runtime/error.hpp"
#include "variants/intersect/cpu_intersect.hpp"
#include "variants/intersect/intersect_registry.hpp"
#include "variants/intersect/packed_device.hpp"
#include "variants/intersect/packed_lists.hpp"

using namespace distancies;
using namespace distancies::intersect;

namespace {

std::vector<std::vector<std::uint32_t>> oracle(const DataSet& d) {
  std::vector<std::vector<std::uint32_t>> out;
  for (const Query& q : d.queries) out.push_back(oracle_intersect(lists_of(d.index, q)));
  return out;
}

void expect_every_gpu_variant_exact(const DataSet& d, const std::string& what, IndexMemory mem = IndexMemory::Explicit,
                                    std::size_t bitmap_budget = std::size_t(1) << 30) {
  const auto want = oracle(d);
  GpuIndex gi(d.index, mem, bitmap_budget);
  GpuBatch b(gi, d.queries);
  for (const IntersectVariant& v : intersect_variants()) {
    if (!v.mark) continue;
    b.run(v, nullptr);
    const auto got = b.answers();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t q = 0; q < want.size(); ++q)
      ASSERT_EQ(got[q], want[q]) << v.name << " on " << what << " (" << memory_name(mem) << "), query " << q << " ("
                                 << want[q].size() << " ids expected, " << got[q].size() << " returned)";
  }
}

TEST(IntersectGpu, ExactOnTheSmallSet) {
  DISTANCIES_REQUIRE_GPU();
  expect_every_gpu_variant_exact(small_set(), "the small set");
  expect_every_gpu_variant_exact(small_set(5), "the small set, seed 5", IndexMemory::Managed);
}

TEST(IntersectGpu, ExactOnTheAdversarialSets) {
  DISTANCIES_REQUIRE_GPU();
  for (auto& [name, d] : adversarial_sets()) {
    expect_every_gpu_variant_exact(d, name);
    expect_every_gpu_variant_exact(d, std::string(name) + ", no bitmaps", IndexMemory::Explicit, 0);
  }
}

TEST(IntersectGpu, ExactAtEveryRatioAndQueryLength) {
  DISTANCIES_REQUIRE_GPU();
  for (int r : {1, 3, 64, 1000}) expect_every_gpu_variant_exact(ratio_set(1500, r, 12), "ratio " + std::to_string(r));
  for (int t = 1; t <= 5; ++t) expect_every_gpu_variant_exact(terms_set(t, 3000, 40), std::to_string(t) + " terms");
  // Shortest lists that are not a multiple of the tile, of a warp, or of a thread's share.
  for (std::size_t n : {1u, 7u, 33u, 1023u, 1025u, 4099u})
    expect_every_gpu_variant_exact(ratio_set(n, 5, 4, n), "short list of " + std::to_string(n));
}

TEST(IntersectGpu, ExactOnAGov2ShapedSetAtFullScale) {
  DISTANCIES_REQUIRE_GPU();
  const DataSet d = gov2_shaped();
  expect_every_gpu_variant_exact(d, "GOV2-shaped");
  Gov2Shape dense;  // answers that are not nearly empty
  dense.lists = 300;
  dense.max_id = 400000;
  dense.mean_length = 8000;
  expect_every_gpu_variant_exact(gov2_shaped(dense, 3), "GOV2-shaped, dense", IndexMemory::Managed);
}

}  // namespace

// A batch given other queries (GpuBatch::assign, a service's next batch in the buffers it keeps):
// a larger batch over the same index (the buffers grow), then a smaller one (they are kept), then
// an empty one; every GPU variant's answers equal the oracle's each time, none left over from the
// batch before.
TEST(IntersectGpu, ABatchAssignedOtherQueriesAnswersThem) {
  DISTANCIES_REQUIRE_GPU();
  const DataSet d = terms_set(3, 3000, 60);
  std::vector<Query> few(d.queries.begin(), d.queries.begin() + 7);
  std::vector<Query> some(d.queries.begin() + 20, d.queries.begin() + 31);
  GpuIndex gi(d.index, IndexMemory::Explicit);
  GpuBatch b(gi, few);
  for (const auto& [what, qs] :
       {std::pair{"all", d.queries}, std::pair{"eleven", some}, std::pair{"none", std::vector<Query>{}}}) {
    b.assign(qs);
    ASSERT_EQ(b.queries(), qs.size());
    for (const IntersectVariant& v : intersect_variants()) {
      if (!v.mark) continue;
      b.run(v, nullptr);
      const auto got = b.answers();
      ASSERT_EQ(got.size(), qs.size()) << v.name << ", " << what;
      for (std::size_t q = 0; q < qs.size(); ++q)
        ASSERT_EQ(got[q], oracle_intersect(lists_of(d.index, qs[q]))) << v.name << ", " << what << ", query " << q;
    }
  }
}

// One query alone (GpuBatch::run_one, the one-query latency's path) returns the oracle's answer
// for every query and every row that answers one alone: short and multi-tile shortest lists,
// empty answers, with and without bitmaps; the other rows refuse with an error.
TEST(IntersectGpu, OneQueryAloneEqualsTheOracle) {
  DISTANCIES_REQUIRE_GPU();
  std::vector<std::pair<std::string, DataSet>> sets;
  sets.emplace_back("the small set", small_set());
  sets.emplace_back("a shortest list of 4,099", ratio_set(4099, 5, 4, 4099));
  for (auto& [name, d] : adversarial_sets()) sets.emplace_back(name, std::move(d));
  for (const auto& [name, d] : sets)
    for (std::size_t budget : {std::size_t(1) << 30, std::size_t(0)}) {
      const auto want = oracle(d);
      GpuIndex gi(d.index, IndexMemory::Explicit, budget);
      GpuBatch b(gi, d.queries);
      for (const IntersectVariant& v : intersect_variants()) {
        if (!v.compacts) {
          if (v.mark) {
            EXPECT_THROW(b.run_one(v, 0, nullptr), Error) << v.name;
          }
          continue;
        }
        for (std::size_t q = 0; q < want.size(); ++q)
          ASSERT_EQ(b.run_one(v, q, nullptr), want[q]) << v.name << " on " << name << ", query " << q;
        EXPECT_THROW(b.run_one(v, want.size(), nullptr), Error);
      }
    }
}

// The warp decode of packed lists on the device (kernels/intersect/packed_decode.cuh) returns
// the codec's ids: a GOV2-shaped set's lists, gaps of every width up to 32 bits, empty lists, a
// list asked twice, lists in any order.
TEST(IntersectGpu, DecodesPackedListsAsTheCodec) {
  DISTANCIES_REQUIRE_GPU();
  Gov2Shape shape;
  shape.lists = 300;
  shape.queries = 1;
  DataSet set = gov2_shaped(shape, 11);
  set.index.add({});
  set.index.add({0u, 0xffffffffu});
  set.index.add({0u, 1u, 0xfffffffeu, 0xffffffffu});
  std::vector<std::uint32_t> wide;
  for (std::uint64_t id = 5; id < 0xffffffffull && wide.size() < 1000; id += 1 + (id * 2654435761ull) % (1ull << 24))
    wide.push_back(static_cast<std::uint32_t>(id));
  set.index.add(wide);
  const PackedLists p = pack_lists(set.index);
  std::vector<std::size_t> lists;
  for (std::size_t l = p.lists(); l-- > 0;) lists.push_back(l);
  lists.push_back(0);
  const auto got = decode_lists_on_device(p, lists);
  ASSERT_EQ(got.size(), lists.size());
  for (std::size_t i = 0; i < lists.size(); ++i) ASSERT_EQ(got[i], unpack_list(p, lists[i])) << "list " << lists[i];
  EXPECT_THROW(decode_lists_on_device(p, {p.lists()}), Error);
}
