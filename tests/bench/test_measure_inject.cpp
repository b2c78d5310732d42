// --inject-slowdown, the regression gate's calibration (docs/regression.md), on host work so it
// runs without a GPU: the work is done that many percent more often, exactly, and every sample
// is charged for it.
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "harness/bench/measure.hpp"
#include "tests/bench/run_one.hpp"

namespace distancies::bench {
namespace {

struct Counted {
  int calls = 0;
  void operator()() {
    ++calls;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
};

benchmark::BenchmarkReporter::Run run_counted(double pct, int samples, Counted& work) {
  MeasureConfig c;
  c.warmups = 2;
  c.inject_slowdown_pct = pct;
  init_measure(c);
  const auto r = run_one(
      "measure_test/inject", [&](benchmark::State& st) { exec_host(st, [&] { work(); }); }, samples);
  shutdown_measure();
  return r;
}

TEST(InjectSlowdown, OffRunsTheWorkOnceASampleAndChargesNothing) {
  Counted work;
  const auto r = run_counted(0, 40, work);
  ASSERT_FALSE(failed(r, 0)) << message(r, 0);
  EXPECT_EQ(work.calls, 2 + 40);
  EXPECT_EQ(r.counters.count("injected_ms"), 0u);
}

TEST(InjectSlowdown, RunsTheWorkThatMuchMoreOftenAndChargesEverySample) {
  Counted work;
  const auto r = run_counted(25, 40, work);  // a quarter: exact in binary, so exactly 10 replays
  ASSERT_FALSE(failed(r, 0)) << message(r, 0);
  EXPECT_EQ(work.calls, 2 + 40 + 10);
  ASSERT_EQ(r.counters.count("injected_ms"), 1u);
  const double injected = r.counters.at("injected_ms").value;
  EXPECT_GT(injected, 0.0);
  // Each sample holds the work plus a quarter of a replay of the same work.
  EXPECT_LT(injected, r.GetAdjustedRealTime() / 1e6);
}

TEST(InjectSlowdown, ShortFixturesAreChargedFromTheirFirstSample) {
  Counted work;
  const auto r = run_counted(3, 10, work);  // fewer samples than one replay needs
  ASSERT_FALSE(failed(r, 0)) << message(r, 0);
  EXPECT_EQ(work.calls, 2 + 10);
  EXPECT_GT(r.counters.at("injected_ms").value, 0.0);
}

}  // namespace
}  // namespace distancies::bench
