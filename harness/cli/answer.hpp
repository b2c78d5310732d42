// What one query (or one batch line) answered, and the batch summary: printed as text straight
// from the hits, and turned into JSON only when --json asks for it.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/cpu_search.hpp"
#include "harness/embeddings/gpu_search.hpp"

namespace distancies::cli {

struct GpuTiming {
  std::string pipeline;
  std::string chosen_by;  // non-empty under --variant auto: why this pipeline
  std::string device;
  Breakdown breakdown;
};

struct CpuTiming {
  double total_ms = 0;
  std::optional<bool> same_rows_as_gpu;  // set when the CPU ran beside the GPU
};

struct Answer {
  int line = 0;  // its line in a batch (0: a single query)
  std::string query;
  int k = 0;
  std::string error;  // non-empty: this line failed (unknown word, bad expression)
  std::vector<Hit> hits;
  std::optional<GpuTiming> gpu;
  std::optional<CpuTiming> cpu;
};

struct BatchSummary {
  // lines = blank + comments + queries; queries = answered + failed.
  int lines = 0, blank = 0, comments = 0;
  int queries = 0, answered = 0, failed = 0, k = 0;
  std::optional<GpuTiming> gpu;
  int sub_batch = 0, fallbacks = 0;  // the batch searcher's split and fallback count (0: none)
  bool batch_searcher = false;       // sub_batch/fallbacks are meaningful
  std::optional<double> cpu_ms;
  double wall_ms = 0;
  double queries_per_s() const { return answered ? answered / (wall_ms / 1000.0) : 0.0; }
};

void print_text(const Answer& a, const WordSource& words);
void print_text(const BatchSummary& s);
nlohmann::json to_json(const Answer& a, const WordSource& words);
nlohmann::json to_json(const BatchSummary& s);

}  // namespace distancies::cli
