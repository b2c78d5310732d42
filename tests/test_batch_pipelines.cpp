// The registry-driven batch suites: every registered batch pipeline, over shapes chosen to be
// nasty, against the fp64 oracle and, query by query, the one-query `fused` pipeline (the re-rank
// must reproduce it bit for bit). Linked into test_registry too, where the trivial scan of
// tests/trivial_scan.cpp runs through them with no other change. GPU tests skip, visibly, without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "batch_check.hpp"
#include "gpu_skip.hpp"
#include "harness/embeddings/batch_search.hpp"
#include "oracle_check.hpp"
#include "runtime/device_model.hpp"
#include "test_models.hpp"
#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/registry.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

std::vector<std::string> names_of_batch_pipelines() {
  std::vector<std::string> v;
  for (const auto& p : batch_pipelines()) v.push_back(p.name);
  return v;
}

struct Shape {
  const char* name;
  ModelSpec spec;
  int k;
  int batch;
  int tile_rows;  // 0: policy
};

// B = 1, B not a multiple of anything (and each of the walks' block sizes), rows not a multiple of the tile, rows < k,
// zero rows, exact ties, D other than 300, k at and beyond the candidate limit.
const Shape kShapes[] = {
    {"b1_d300", {20011, 300, 0, 0, 0}, 10, 1, 0},
    {"b37_d300", {20011, 300, 0, 0, 0}, 10, 37, 0},
    {"b3_d300", {5000, 300, 0, 0, 0}, 10, 3, 0},
    {"b130_small_tiles", {20011, 300, 0, 0, 0}, 10, 130, 1000},
    {"b16_d50", {4099, 50, 0, 0, 0}, 10, 16, 0},
    {"b9_d301", {3001, 301, 0, 0, 0}, 10, 9, 512},
    {"b5_d7", {777, 7, 0, 0, 0}, 16, 5, 0},
    {"rows_lt_k", {5, 300, 0, 0, 0}, 10, 3, 0},
    {"one_row", {1, 40, 0, 0, 0}, 3, 2, 0},
    {"zero_rows", {2049, 300, 0, 64, 0}, 10, 7, 0},
    {"k128", {10007, 96, 0, 0, 0}, 128, 4, 0},
    {"k200", {5003, 300, 0, 0, 0}, 200, 3, 0},
    {"b200_k64", {20011, 300, 0, 0, 0}, 64, 200, 0},  // the fused scan: two launches, K = 128 shapes
    {"b40_d1000", {3001, 1000, 0, 0, 0}, 10, 40, 0},
    {"b29_d300", {20011, 300, 0, 0, 0}, 10, 29, 0},  // the walks' 32-query blocks (16: b16_d50 and below)
};

void PrintTo(const Shape& s, std::ostream* os) { *os << s.name; }

}  // namespace

class BatchPipelineTest : public ::testing::TestWithParam<std::tuple<std::string, Shape>> {};

TEST_P(BatchPipelineTest, EveryQueryMatchesOracleAndFused) {
  DISTANCIES_REQUIRE_GPU();
  const auto& [name, s] = GetParam();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  ModelSpec spec = s.spec;
  spec.seed = seed;
  const Model m = random_model(spec);
  DeviceModel dm = upload_model(m);
  BatchSearcher::Options o;
  o.tile_rows = s.tile_rows;
  BatchSearcher bs(dm, o);
  const Batch b = random_batch(m, s.batch, seed);
  Breakdown bd;
  const auto got = bs.search(batch_pipeline(name), b.q.data(), b.norms.data(), s.batch, s.k, &bd);
  expect_batch_exact(m, dm, b, got, s.k);
  // Random data leaves wide gaps below the k-th: the tiles' scores alone must certify it (a
  // wrong score would only show as a fallback, which would still answer exactly). The int8 walk's
  // bound (~0.014 at D = 300) is wider than the gap from the 64th to the 128th of 20,011 random
  // rows: checked up to k = 16 (K = 64); where it refuses the model (D > 320), every query is
  // refused and answered by the fallback.
  const BatchPipeline& p = batch_pipeline(name);
  const bool i8 = p.scan_row == &batch_scan("filtered_i8");
  if (i8 && batch_scan_refusal(*p.scan_row, s.spec.dim, BatchPolicy::candidates(s.k), 9)) {
    EXPECT_EQ(bs.last_refused(), s.batch);
  } else if (!p.per_query && s.k <= (i8 ? 16 : 64) && p.input != GemmInput::BF16) {
    EXPECT_EQ(bs.last_fallbacks(), 0) << "the certificate failed on well-separated random data";
  }
  EXPECT_GT(bd.total_ms, 0.0f);
  EXPECT_GT(bd.kernel_ms(), 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Registry, BatchPipelineTest,
                         ::testing::Combine(::testing::ValuesIn(names_of_batch_pipelines()),
                                            ::testing::ValuesIn(kShapes)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, Shape>>& i) {
                           return std::get<0>(i.param) + "_" + std::get<1>(i.param).name;
                         });

// 41 exact copies of one row spread over the model (so over many tiles, slices and fused-scan
// blocks), the query is that row: the 30 results are the 30 lowest copies, the same for every
// batch pipeline and for `fused`, with random queries around it in the batch.
TEST(BatchSearch, TiesAcrossTilesAndBlocksGoToTheLowerRows) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Model m = random_model({60013, 300, seed, 0, 0});
  const std::vector<int> copies = plant_copies_of_row_7(m, 1451);
  DeviceModel dm = upload_model(m);
  BatchSearcher bs(dm);
  Batch b = random_batch(m, 37, seed);
  std::memcpy(b.q.data() + 5 * m.dim, m.row(7), m.dim * sizeof(float));
  b.norms[5] = m.norms[7];
  for (const BatchPipeline& p : batch_pipelines()) {
    SCOPED_TRACE(p.name);
    const auto got = bs.search(p, b.q.data(), b.norms.data(), 37, 30);
    expect_batch_exact(m, dm, b, got, 30);
    for (int r = 0; r < 30; ++r) EXPECT_EQ(got[5][r].row, copies[r]) << "rank " << r;
  }
}
