// How distancies-bench runs its fixtures: the suite (suites.hpp), a progress line per fixture
// with an ETA, a JSON file rewritten whole after every fixture (valid at every moment; --out),
// --resume, and a summary at the end (docs/methodology.md, "Suites, progress, resume").
#pragma once
#include <string>

namespace distancies::bench {

struct SuiteOptions {
  std::string suite;          // empty: main, or full when --benchmark_filter was given
  std::string out;            // the incrementally written JSON; empty: none
  std::string resume;         // an earlier run's JSON: its fixtures are not run again
  std::string estimate_from;  // an earlier run's JSON with fixture_wall_s; empty: --out when it exists
};

// Google Benchmark's flags this file needs, read from argv before benchmark::Initialize takes them.
struct BenchmarkFlags {
  std::string filter, repetitions, min_time, out, format = "console";
  bool list_tests = false;
};
BenchmarkFlags scan_benchmark_flags(int argc, char** argv);

// Google Benchmark's JSON writer prints a NaN or infinite counter as a bare NaN / Infinity,
// which is not JSON: those tokens (outside strings) become null.
std::string json_without_nonfinite(const std::string& text);

// Registers the selected fixtures and runs them. Returns the exit status. Throws Error on bad input.
int run_suite(const SuiteOptions& options, const BenchmarkFlags& flags, bool gpu);

}  // namespace distancies::bench
