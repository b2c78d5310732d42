// The registry reaches the fixtures: with the trivial rows of tests/trivial_entry.cpp (a top-k
// stage and a pipeline), tests/trivial_copy.cpp (a model copy) and tests/trivial_scan.cpp (a batch
// scan and a batch pipeline) added,
// nowhere else, registering the bench's families gives them their fixtures, named as every
// other row's, with no other change. Runs on the CPU: fixtures
// are registered here, not run.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "trivial_copy.hpp"
#include "trivial_entry.hpp"
#include "trivial_scan.hpp"

using namespace distancies;

namespace {

TEST(BenchRegistry, AnAddedRowGetsItsFixtures) {
  bench::BenchConfig c;
  c.rows = 1000;  // a small model: only the names matter here
  c.dim = 8;
  bench::init_measure(bench::MeasureConfig{});  // the state times its floors on a GPU
  bench::init_bench_state(c);
  bench::register_fixtures(true);  // the GPU families too: registering them needs no GPU
  const auto& names = bench::registered_fixtures();
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  const std::string stage = distancies::testing::kTrivialStage, pipe = distancies::testing::kTrivialPipeline;
  for (const std::string& want : {"topk/" + stage + "/k:1", "topk/" + stage + "/k:10", "topk/" + stage + "/k:1024",
                                  "topk/" + stage + "/rows:65536/k:100", "pipeline/" + pipe})
    EXPECT_TRUE(has(want)) << want << " was not registered";
  // The trivial scan's pipeline: a batch fixture at every batch size and a shard fixture; no GEMM
  // or tile fixtures (it has no GEMM of its own), as for the fused and filtered scans.
  const std::string batch = distancies::testing::kTrivialBatchPipeline;
  for (int b : {1, 16, 1024, 8192})
    EXPECT_TRUE(has("batch/" + batch + "/batch:" + std::to_string(b))) << batch << " at B = " << b;
  EXPECT_TRUE(has("shard/" + batch + "/gpus:1/batch:1024"));
  EXPECT_FALSE(has("batch_gemm/" + batch + "/batch:1024"));
  // The trivial copy: its making timed, as every copy row's is.
  EXPECT_TRUE(has(std::string("copy/") + distancies::testing::kTrivialCopy));
  EXPECT_TRUE(has("copy/tiled_i8"));
  EXPECT_TRUE(has("copy/centred_f16"));
  // The built-in rows are named the same way, and the other studies' families are there too.
  EXPECT_TRUE(has("topk/fused_scan_topk/k:10"));
  EXPECT_TRUE(has("pipeline/fused_f16"));
  EXPECT_TRUE(has("batch/batch_f16_h/batch:1024"));
  EXPECT_TRUE(has("batch/batch_f16_filter/batch:16"));
  for (int b : {1, 16, 1024, 8192}) EXPECT_TRUE(has("batch_auto/batch:" + std::to_string(b))) << b;
  EXPECT_TRUE(std::any_of(names.begin(), names.end(),
                          [](const std::string& n) { return n.rfind("moments/one_pass/", 0) == 0; }));
  EXPECT_TRUE(
      std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.rfind("intersect/", 0) == 0; }));
}

}  // namespace
// A fixture's name and its counters come from one declaration of its axes (nvbench-style).
TEST(BenchRegistry, AFixtureNameIsItsAxes) {
  bench::FixtureName f("batch_tile", "batch_f16_h");
  f.axis("batch", 1024).axis("tile", 65536).axis("cache", "warm");
  EXPECT_EQ(f.str(), "batch_tile/batch_f16_h/batch:1024/tile:65536/cache:warm");
  ASSERT_EQ(f.counters().size(), 2u) << "a label axis is in the name only";
  EXPECT_EQ(f.counters()[0].first, "batch");
  EXPECT_EQ(f.counters()[0].second, 1024.0);
  EXPECT_EQ(f.counters()[1].first, "tile");
  EXPECT_EQ(bench::FixtureName("intersect", "probe").row("coarse_batch").axis("set", "gov2").str(),
            "intersect/probe/coarse_batch/set:gov2");
}
