// The suites' table (harness/bench/suites.cpp) against every fixture a GPU build registers,
// without a GPU (registering needs none): every pattern of every suite matches at least one
// fixture, the main suite is a small part of the full one, and unselected fixtures never
// reach Google Benchmark.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "harness/bench/suite_run.hpp"
#include "harness/bench/suites.hpp"
#include "runtime/error.hpp"

using namespace distancies;

namespace {

const std::vector<std::string>& every_fixture() {
  static const std::vector<std::string> names = [] {
    bench::BenchConfig c;
    c.rows = 1000;  // a small model: only the names matter here
    c.dim = 8;
    bench::init_measure(bench::MeasureConfig{});  // the state times its floors on a GPU
    bench::init_bench_state(c);
    bench::fixture_selection() = [](const std::string& n) { return bench::in_suite(bench::find_suite("main"), n); };
    bench::register_fixtures(true);  // the GPU families too
    bench::fixture_selection() = nullptr;
    return bench::registered_fixtures();
  }();
  return names;
}

TEST(BenchSuites, EveryPatternMatchesARegisteredFixture) {
  const auto& names = every_fixture();
  for (const bench::Suite& s : bench::suites())
    for (const bench::SuitePattern& p : s.patterns) {
      const std::regex re(p.pattern);
      EXPECT_TRUE(
          std::any_of(names.begin(), names.end(), [&](const std::string& n) { return std::regex_match(n, re); }))
          << s.name << ": " << p.pattern << " (" << p.why << ") matches no registered fixture";
      EXPECT_STRNE(p.why, "") << p.pattern;
    }
}

TEST(BenchSuites, MainIsTheStudysTablesAndTheHeadlines) {
  const auto& names = every_fixture();
  const bench::Suite& main = bench::find_suite("main");
  const auto in_main =
      std::count_if(names.begin(), names.end(), [&](const std::string& n) { return bench::in_suite(main, n); });
  EXPECT_GT(in_main, 40);
  EXPECT_LT(in_main * 5, static_cast<long>(names.size()));  // a first sitting, not the sweep
  for (const char* want : {"floor/read_model", "sequence/V1", "sequence/CPU", "dot/warp_shuffle_dot",
                           "topk/fused_scan_topk/k:10", "pipeline/fused", "batch/batch_i8_filter/batch:1024",
                           "batch_auto/batch:16", "intersect/probe/coarse_batch/set:gov2"})
    EXPECT_TRUE(bench::in_suite(main, want)) << want;
  EXPECT_FALSE(bench::in_suite(main, "topk/fused_scan_topk/k:100"));
  EXPECT_FALSE(bench::in_suite(main, "batch/batch_i8_filter/batch:8192"));
  EXPECT_TRUE(bench::in_suite(bench::find_suite("full"), "batch/batch_i8_filter/batch:8192"));
  EXPECT_THROW(bench::find_suite("nope"), Error);
}

}  // namespace

// Google Benchmark prints NaN and infinite counters as bare tokens; the incremental writer must
// still parse every fixture's JSON (a NaN counter broke the first H200 run of the main suite).
TEST(BenchSuites, NonFiniteCountersBecomeNull) {
  const std::string gb = R"({"a": NaN, "b": -Infinity, "c": Infinity, "d": -NaN, "e": "NaN inside", "f": 1.5})";
  const std::string clean = distancies::bench::json_without_nonfinite(gb);
  EXPECT_EQ(clean, R"({"a": null, "b": null, "c": null, "d": null, "e": "NaN inside", "f": 1.5})");
  const std::string escaped = R"({"q": "say \"NaN\"", "x": NaN})";
  EXPECT_EQ(distancies::bench::json_without_nonfinite(escaped), R"({"q": "say \"NaN\"", "x": null})");
}
