#include "harness/bench/suites.hpp"

#include <map>
#include <memory>
#include <regex>

#include "harness/bench/fixture_util.hpp"
#include "runtime/error.hpp"

namespace distancies::bench {
namespace {

// What a newcomer's first sitting on a GPU host runs (scripts/setup.sh): the study's tables
// and each study's headline comparison, a few minutes on the H100 at 3 repetitions. A row
// whose pattern matches no registered fixture fails tests/bench/test_bench_suites.cpp.
std::vector<SuitePattern> main_patterns() {
  return {
      {"floor/read_model(_16bit|_8bit)?",
       "the memory floors every embeddings ratio is taken against (fp32, 16-bit, int8)"},
      {"sequence/.*", "the study's Table 1: its query sequence on the CPU and V1-V4"},
      {"cpu/sequential", "the study's CPU search, the baseline of every speed-up"},
      {"dot/.*", "the study's Table 2: every DotProduct variant"},
      {"topk/[^/]+/k:10", "the study's Table 3: every top-k stage over the whole model at the study's k = 10"},
      {"pipeline/[^/]+", "every one-query pipeline at k = 10: V1-V4 and the fused ones against the floors"},
      {"pipeline/(fused|fused_f16|fused_i8)/k:1024", "large k: the fused pipelines at k = 1,024"},
      {"batch/(batch_i8_filter|batch_f16_filter|batch_f16_h)/batch:(1|16|1024)",
       "batches: the best batch pipelines and the cuBLAS tiles at B = 1, 16, 1,024"},
      {"batch_auto/batch:(1|16|1024)", "batches: what --variant auto picks at B = 1, 16, 1,024"},
      {"moments/[^/]+/rows:894785/cols:300",
       "column moments: every variant and the floor at 300 columns, 2^28 elements"},
      {"moments/(floor|one_pass|two_pass)/rows:55/cols:300", "column moments: a small call's latency (2^14 elements)"},
      {"matmul/(cublas_sgemm|cublas_f16|cutlass_simt_f32|cutlass_f16|warp_tiled_sgemm|mma_f16_128x256|"
       "register_tile_8x8|naive)/M:4096/N:4096/K:4096",
       "tiled matmul at 4096^3: the ladder's steps against cuBLAS and CUTLASS"},
      {"intersect/(floor|svs/serial|svs/coarse|probe/coarse_batch)/set:gov2",
       "posting lists: 1,000 GOV2-shaped queries, serial SVS, the study's GPU SVS and the best batch against the "
       "floor"},
  };
}

// A fixture Google Benchmark never sees: settings chained after add() land here and do nothing.
class UnselectedFixture : public benchmark::internal::Benchmark {
 public:
  explicit UnselectedFixture(const std::string& name) : Benchmark(name.c_str()) {}
  void Run(benchmark::State&) override {}
};

}  // namespace

const std::vector<Suite>& suites() {
  static const std::vector<Suite> all = {
      {"main", "the study's tables and each study's headline comparison (a first sitting)", 3, "0.2", main_patterns()},
      {"full", "every registered fixture", 0, nullptr, {}},
  };
  return all;
}

const Suite& find_suite(const std::string& name) {
  std::string known;
  for (const Suite& s : suites()) {
    if (name == s.name) return s;
    known += (known.empty() ? "" : ", ") + std::string(s.name);
  }
  throw Error("unknown suite '" + name + "' (known: " + known + ")");
}

bool in_suite(const Suite& suite, const std::string& fixture) {
  if (suite.patterns.empty()) return true;
  static std::map<const Suite*, std::vector<std::regex>> compiled;  // once per suite, not per fixture
  auto& res = compiled[&suite];
  if (res.empty())
    for (const SuitePattern& p : suite.patterns) res.emplace_back(p.pattern);
  for (const std::regex& re : res)
    if (std::regex_match(fixture, re)) return true;
  return false;
}

std::function<bool(const std::string&)>& fixture_selection() {
  static std::function<bool(const std::string&)> selection;
  return selection;
}

benchmark::internal::Benchmark* unselected_fixture(const std::string& name) {
  static std::vector<std::unique_ptr<UnselectedFixture>> kept;
  kept.push_back(std::make_unique<UnselectedFixture>(name));
  return kept.back().get();
}

}  // namespace distancies::bench
