#include "harness/cli/answer.hpp"

#include <cstdio>

namespace distancies::cli {
namespace {

nlohmann::json timing_json(const GpuTiming& g) {
  const Breakdown& bd = g.breakdown;
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& s : bd.stages) stages[s.name] = stages.value(s.name, 0.0) + s.ms;
  nlohmann::json j = {{"pipeline", g.pipeline},          {"device", g.device},
                      {"total_ms", bd.total_ms},         {"wall_ms", bd.wall_ms},
                      {"kernel_ms", bd.kernel_ms()},     {"transfer_ms", bd.transfer_ms()},
                      {"overhead_ms", bd.overhead_ms()}, {"stages_ms", stages}};
  if (!g.chosen_by.empty()) j["chosen_by"] = "auto: " + g.chosen_by;
  return j;
}

// Stage times summed by name, in the order the stages first ran.
void print_timing(const GpuTiming& g) {
  const Breakdown& bd = g.breakdown;
  std::printf("  gpu %s: %.3f ms (kernels %.3f, transfers %.3f, overhead %.3f;", g.pipeline.c_str(), bd.total_ms,
              bd.kernel_ms(), bd.transfer_ms(), bd.overhead_ms());
  std::vector<std::string> seen;
  for (const auto& s : bd.stages) {
    bool first = true;
    for (const auto& n : seen) first = first && n != s.name;
    if (!first) continue;
    seen.push_back(s.name);
    std::printf(" %s %.3f", s.name.c_str(), bd.stage_ms(s.name));
  }
  std::printf(")\n");
  if (!g.chosen_by.empty()) std::printf("  (auto chose %s: %s)\n", g.pipeline.c_str(), g.chosen_by.c_str());
}

}  // namespace

void print_text(const Answer& a, const WordSource& m) {
  std::printf("%s\n", a.query.c_str());
  for (std::size_t i = 0; i < a.hits.size(); ++i)
    std::printf("%4d  %-24s %.6f\n", static_cast<int>(i + 1), m.word(a.hits[i].row).c_str(), a.hits[i].sim);
  if (a.gpu) print_timing(*a.gpu);
  if (a.cpu) {
    std::printf("  cpu sequential: %.3f ms", a.cpu->total_ms);
    if (a.cpu->same_rows_as_gpu)
      std::printf(" (%s)", *a.cpu->same_rows_as_gpu ? "same rows as the gpu" : "rows differ from the gpu: near-ties");
    std::printf("\n");
  }
  std::fflush(stdout);
}

void print_text(const BatchSummary& s) {
  std::printf(
      "batch: %d lines: %d skipped (%d blank, %d comment%s), %d queries: %d answered, %d failed; %.0f queries/s\n",
      s.lines, s.blank + s.comments, s.blank, s.comments, s.comments == 1 ? "" : "s", s.queries, s.answered, s.failed,
      s.queries_per_s());
  if (s.gpu) {
    print_timing(*s.gpu);
    if (s.batch_searcher)
      std::printf("  sub-batches of %d, %d queries redone by the fallback\n", s.sub_batch, s.fallbacks);
  }
  if (s.cpu_ms) std::printf("  cpu sequential: %.3f ms\n", *s.cpu_ms);
  std::fflush(stdout);
}

nlohmann::json to_json(const Answer& a, const WordSource& m) {
  nlohmann::json j;
  if (a.line > 0) j["line"] = a.line;
  j["query"] = a.query;
  j["k"] = a.k;
  if (!a.error.empty()) {
    j["error"] = a.error;
    return j;
  }
  nlohmann::json r = nlohmann::json::array();
  for (std::size_t i = 0; i < a.hits.size(); ++i)
    r.push_back(
        {{"rank", i + 1}, {"word", m.word(a.hits[i].row)}, {"row", a.hits[i].row}, {"similarity", a.hits[i].sim}});
  j["results"] = r;
  if (a.gpu) j["gpu"] = timing_json(*a.gpu);
  if (a.cpu) {
    j["cpu"] = {{"total_ms", a.cpu->total_ms}};
    if (a.cpu->same_rows_as_gpu) j["cpu"]["same_rows_as_gpu"] = *a.cpu->same_rows_as_gpu;
  }
  return j;
}

nlohmann::json to_json(const BatchSummary& s) {
  nlohmann::json j = {
      {"lines", s.lines},     {"blank", s.blank},       {"comments", s.comments}, {"skipped", s.blank + s.comments},
      {"queries", s.queries}, {"answered", s.answered}, {"failed", s.failed},     {"k", s.k}};
  if (s.gpu) j["gpu"] = timing_json(*s.gpu);
  if (s.batch_searcher) {
    j["sub_batch"] = s.sub_batch;
    j["fallbacks"] = s.fallbacks;
  }
  if (s.cpu_ms) j["cpu"] = {{"total_ms", *s.cpu_ms}};
  j["wall_ms"] = s.wall_ms;
  j["queries_per_s"] = s.queries_per_s();
  return {{"summary", j}};
}

}  // namespace distancies::cli
