// Every GPU intersection variant returns exactly the oracle's ids, in order, for every query:
// on the study's small set, random sets of every list-length ratio and query length, the
// adversarial sets, a GOV2-shaped set at full scale, and with the index in explicit and in
// managed memory.
#include <gtest/gtest.h>

#include <string>

#include "gpu_skip.hpp"
#include "harness/intersect/generate.hpp"
#include "harness/intersect/gpu_intersect.hpp"
#include "variants/intersect/cpu_intersect.hpp"
#include "variants/intersect/intersect_registry.hpp"

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
