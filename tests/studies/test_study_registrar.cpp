// A study registers itself (cmake/studies.cmake): the trivial study (tests/studies/trivial) is its
// own folders and one more word in the studies' list. The generator that writes the product's glue
// wrote this test's from that list, and the study's rows, fixture and subcommand reach the catalog,
// the registry check, the bench and the CLI beside every other study's.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "harness/cli/commands.hpp"
#include "variants/registry_model.hpp"

using namespace distancies;

namespace {

bool has_family(const std::string& study, const std::string& family) {
  for (const registry::Family& f : registry::catalog())
    if (f.study == study && (family.empty() || f.family == family)) return true;
  return false;
}

TEST(StudyRegistrar, TheTrivialStudysRowsReachTheCatalogAndTheCheck) {
  ASSERT_TRUE(has_family("trivial", "greeting"));
  for (const registry::Family& f : registry::catalog())
    if (f.study == "trivial") {
      const auto rows = f.entries();
      ASSERT_EQ(rows.size(), 1u);
      EXPECT_EQ(rows[0].name, "hello");
    }
  for (const char* s : {"embeddings", "moments", "intersect", "matmul"}) EXPECT_TRUE(has_family(s, "")) << s;
  EXPECT_NO_THROW(registry::check_all());
}

TEST(StudyRegistrar, TheTrivialStudysFixtureIsRegistered) {
  bench::init_measure(bench::MeasureConfig{});
  bench::BenchConfig c;
  c.rows = 1000;  // a small model: only the names matter here
  c.dim = 8;
  bench::init_bench_state(c);
  bench::fixture_selection() = [](const std::string&) { return false; };  // names only, none run
  bench::register_fixtures(true);
  bench::fixture_selection() = nullptr;
  const auto& names = bench::registered_fixtures();
  auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  EXPECT_TRUE(has("trivial/hello"));
  EXPECT_TRUE(has("pipeline/fused"));
  EXPECT_TRUE(has("intersect/svs/serial/set:small"));
}

TEST(StudyRegistrar, TheTrivialStudysSubcommandRuns) {
  CLI::App app{"test"};
  cli::add_study_commands(app);
  for (const char* name : {"hello", "query", "moments", "intersect"}) EXPECT_NO_THROW(app.get_subcommand(name)) << name;
  const char* argv[] = {"distancies", "hello"};
  testing::internal::CaptureStdout();
  app.parse(2, argv);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "hello\n");
}

}  // namespace
