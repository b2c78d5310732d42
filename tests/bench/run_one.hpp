// Runs one Google Benchmark fixture alone and returns its run (the engine's tests).
#pragma once
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace distancies::bench {

class Capture : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& r) override { runs.insert(runs.end(), r.begin(), r.end()); }
  std::vector<Run> runs;
};

// Google Benchmark 1.8 reports skips and errors through `skipped`; 1.7 through `error_occurred`.
template <class R>
auto failed(const R& r, int) -> decltype(bool(r.skipped)) {
  return bool(r.skipped);
}
template <class R>
bool failed(const R& r, long) {
  return r.error_occurred;
}
template <class R>
auto message(const R& r, int) -> decltype(std::string(r.skip_message)) {
  return r.skip_message;
}
template <class R>
std::string message(const R& r, long) {
  return r.error_message;
}

// Registers `fn` alone, runs it, returns its one run.
template <class Fn>
benchmark::BenchmarkReporter::Run run_one(const std::string& name, Fn fn, int iterations) {
  benchmark::ClearRegisteredBenchmarks();
  benchmark::RegisterBenchmark(name.c_str(), fn)->UseManualTime()->Iterations(iterations);
  Capture c;
  benchmark::RunSpecifiedBenchmarks(&c, name);
  benchmark::ClearRegisteredBenchmarks();
  EXPECT_EQ(c.runs.size(), 1u);
  return c.runs.empty() ? benchmark::BenchmarkReporter::Run{} : c.runs.front();
}

}  // namespace distancies::bench
