// distancies-bench's named fixture selections (--suite): which registered fixtures a run
// hands to Google Benchmark. The table lives in suites.cpp, one row a pattern and why.
#pragma once
#include <string>
#include <vector>

namespace distancies::bench {

// A family or a few fixtures: an ECMAScript regex matched against the whole fixture name
// (the name given to add(), without Google Benchmark's /manual_time, /iterations:N suffixes).
struct SuitePattern {
  const char* pattern;
  const char* why;
};

struct Suite {
  const char* name;
  const char* summary;
  int repetitions;                     // Google Benchmark's repetitions unless the flag says; 0: its default
  const char* min_time;                // --benchmark_min_time unless the flag says; null: its default
  std::vector<SuitePattern> patterns;  // empty: every registered fixture
};

// Every suite, the default first.
const std::vector<Suite>& suites();
// Throws Error naming the known suites when `name` is not one.
const Suite& find_suite(const std::string& name);
bool in_suite(const Suite& suite, const std::string& fixture);

}  // namespace distancies::bench
