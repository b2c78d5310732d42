// The embeddings study's registry check: names unique, every reference resolves, and every
// pipeline's stages fit together (each reads what the one before it leaves, the last leaves the
// top k). Run once at start-up (registry::check_all()); a bad row is an error there, never at
// launch.
#include <string>

#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/list_select.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/registry.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

const char* stage_data_name(StageData d) {
  switch (d) {
    case StageData::Model:
      return "the model";
    case StageData::Similarities:
      return "a similarity per row";
    case StageData::SortedChunks:
      return "sorted k-chunks";
    case StageData::CandidateLists:
      return "per-block candidate lists";
    case StageData::TopK:
      return "the top k";
  }
  return "?";
}

std::string MemoryHabits::describe() const {
  std::string s;
  auto add = [&](bool on, const char* what) {
    if (on) s += (s.empty() ? "" : ", ") + std::string(what);
  };
  add(copy_model_every_query, "model copied per query");
  add(scratch_per_query, "scratch per query");
  add(sync_each_stage, "sync per stage");
  add(pinned_host, "pinned host buffers");
  return s.empty() ? "resident, pageable host buffers" : s;
}

std::vector<std::string> stage_problems(const TopkStage& s, const Table<TopkStage>& stages) {
  std::vector<std::string> out;
  const std::string me = std::string("top-k stage '") + s.name + "'";
  if (!s.run || !s.temp_bytes) out.push_back(me + " has no run or scratch function");
  if (s.input == StageData::TopK) out.push_back(me + " reads the top k (nothing left to do)");
  if (s.input == StageData::Model && !s.reads_model)
    out.push_back(me + " reads the model but does not say it scans it");
  const bool needs_before = s.input == StageData::SortedChunks || s.input == StageData::CandidateLists;
  if (s.after) {
    const TopkStage* a = stages.find(s.after);
    if (!a)
      out.push_back(me + " comes after unknown stage '" + s.after + "'");
    else if (a->output != s.input)
      out.push_back(me + " reads " + stage_data_name(s.input) + " but '" + a->name + "' leaves " +
                    stage_data_name(a->output));
  } else if (needs_before) {
    out.push_back(me + " reads " + stage_data_name(s.input) + " and names no stage that makes it");
  }
  return out;
}

namespace {

// A row's fallback chain resolves and ends (no row falls back to itself, directly or not).
template <class Row>
void fallback_chain_problems(const Row& row, const Table<Row>& all, const std::string& me,
                             std::vector<std::string>& out) {
  const Row* at = &row;
  for (int hops = 0; at->fallback; ++hops) {
    const Row* next = all.find(at->fallback);
    if (!next) {
      out.push_back(me + " falls back to unknown " + all.what() + " '" + at->fallback + "'");
      return;
    }
    if (hops > static_cast<int>(all.size())) {
      out.push_back(me + "'s fallbacks go round in a circle");
      return;
    }
    at = next;
  }
}

}  // namespace

std::vector<std::string> pipeline_problems(const Pipeline& p, const Table<DotVariant>& dots,
                                           const Table<TopkStage>& stages, const Table<Pipeline>& all) {
  std::vector<std::string> out;
  const std::string me = std::string("pipeline '") + p.name + "'";
  if (p.dot && !dots.find(p.dot)) out.push_back(me + " names unknown dot variant '" + p.dot + "'");
  if (p.topk.empty()) out.push_back(me + " has no top-k stage");
  StageData have = p.dot ? StageData::Similarities : StageData::Model;
  for (const char* name : p.topk) {
    const TopkStage* s = stages.find(name);
    if (!s) {
      out.push_back(me + " names unknown top-k stage '" + name + "'");
      return out;
    }
    if (s->input != have)
      out.push_back(me + ": stage '" + name + "' reads " + stage_data_name(s->input) + " but gets " +
                    stage_data_name(have));
    have = s->output;
  }
  if (have != StageData::TopK)
    out.push_back(me + " ends with " + std::string(stage_data_name(have)) + ", not the top k");
  fallback_chain_problems(p, all, me, out);
  return out;
}

namespace {

std::vector<std::string> batch_problems(const BatchPipeline& b, const Table<BatchPipeline>& all) {
  std::vector<std::string> out;
  const std::string me = std::string("batch pipeline '") + b.name + "'";
  if (b.per_query && !pipelines().find(b.per_query)) out.push_back(me + " runs unknown pipeline '" + b.per_query + "'");
  if (!b.per_query && !b.scan_row)
    out.push_back(me + " is scanned by unknown batch scan '" + (b.scan ? b.scan : "") +
                  "' (known: " + batch_scans().names() + ")");
  fallback_chain_problems(b, all, me, out);
  return out;
}

// A scan row must say how many lists it leaves and how it scores; scratch and its binding come together.
std::vector<std::string> scan_problems(const BatchScanRow& s) {
  std::vector<std::string> out;
  const std::string me = std::string("batch scan '") + (s.name ? s.name : "") + "'";
  if (!s.slices) out.push_back(me + " does not say how many lists a query it leaves");
  if (!s.score) out.push_back(me + " has no launch");
  if (!s.scratch != !s.bind) out.push_back(me + " has scratch without its binding, or a binding without scratch");
  // A scan added (by another file's static initialiser) before its copy's row is resolved now.
  if (s.copy && !s.copy_row) const_cast<BatchScanRow&>(s).copy_row = model_copies().find(s.copy);
  if (s.copy && !s.copy_row) out.push_back(me + " reads unknown model copy '" + s.copy + "'");
  if (!s.copy != !s.attach_copy) out.push_back(me + " names a copy without attaching it, or attaches none");
  return out;
}

template <class Row, class Fn>
std::vector<std::string> problems_of(const Table<Row>& t, Fn row_problems) {
  std::vector<std::string> out;
  registry::check_names(t, out);
  for (const Row& r : t)
    for (std::string& p : row_problems(r)) out.push_back(std::move(p));
  return out;
}

template <class Row>
registry::Family family_of(
    const Table<Row>& t, std::function<std::vector<std::string>(const Row&)> row_problems,
    std::function<std::string(const Row&)> requirements = nullptr,
    std::function<std::vector<std::pair<std::string, std::string>>(const Row&)> traits = nullptr) {
  return {t.study(), t.family(), t.what(),
          [&t, requirements, traits] { return registry::views(t, requirements, traits); },
          [&t, row_problems] { return problems_of(t, row_problems); }};
}

// What scripts/reports/batch_roofline.py needs to model a batch pipeline's work: the tensor cores'
// operand precision, how scores travel, and how many queries share one read of the model
// (0: the whole batch).
std::vector<std::pair<std::string, std::string>> batch_traits(const BatchPipeline& b) {
  if (b.per_query) return {{"scan", "per_query"}, {"precision", "fp32"}, {"queries_per_model_read", "1"}};
  if (!b.scan_row) return {{"scan", b.scan ? b.scan : ""}};  // batch_problems says why
  const BatchScanRow& scan = *b.scan_row;
  const int per_read = scan.queries_per_read ? scan.queries_per_read() : 0;
  // A scan that reads one byte an element (the int8 walk's last pass, which reads the whole model)
  // reads the int8 copy.
  const bool i8 = scan.element_bytes == 1.0;
  std::vector<std::pair<std::string, std::string>> t = {{"scan", scan.name},
                                                        {"precision", i8 ? "int8" : gemm_input_name(b.input)},
                                                        {"copy", i8 ? "i8" : storage_name(gemm_storage(b.input))},
                                                        {"queries_per_model_read", std::to_string(per_read)}};
  if (scan.gemm_tiles) t.push_back({"scores", storage_name(b.scores)});
  return t;
}

}  // namespace

// The study's registry registrar (cmake/studies.cmake).
namespace registry {
void add_embeddings_families(std::vector<Family>& out);
}

void registry::add_embeddings_families(std::vector<Family>& out) {
  auto none = [](const auto&) { return std::vector<std::string>{}; };
  out.push_back(family_of<DotVariant>(
      dot_variants(),
      [](const DotVariant& d) {
        return d.launch ? std::vector<std::string>{}
                        : std::vector<std::string>{std::string("dot variant '") + d.name + "' has no launch"};
      },
      [](const DotVariant& d) { return std::to_string(d.threads_per_row) + " threads/row"; }));
  out.push_back(family_of<TopkStage>(
      topk_stages(), [](const TopkStage& s) { return stage_problems(s, topk_stages()); },
      [](const TopkStage& s) {
        return std::string("reads ") + stage_data_name(s.input) + ", leaves " + stage_data_name(s.output);
      }));
  out.push_back(family_of<ListSelector>(list_selectors(), none, nullptr));
  out.push_back(family_of<Pipeline>(
      pipelines(), [](const Pipeline& p) { return pipeline_problems(p, dot_variants(), topk_stages(), pipelines()); },
      [](const Pipeline& p) {
        std::string r = std::string(storage_name(p.storage)) + " storage; " + p.habits.describe();
        if (p.fallback) r += "; falls back to " + std::string(p.fallback);
        return r;
      }));
  out.push_back(family_of<ModelCopyRow>(model_copies(), model_copy_problems, [](const ModelCopyRow& c) {
    std::string r = c.after ? std::string("made after ") + c.after : std::string("made from the rows");
    if (c.centred) r += std::string("; centred as ") + c.centred;
    return r;
  }));
  out.push_back(family_of<BatchScanRow>(batch_scans(), scan_problems, [](const BatchScanRow& s) {
    std::string r = s.gemm_tiles ? "GEMM tiles" : s.filters ? "filters by thresholds" : "one fused kernel";
    if (s.upper_bound_keys) r += "; keys bound from above";
    if (s.copy) r += std::string("; reads copy ") + s.copy;
    return r;
  }));
  out.push_back(family_of<BatchPipeline>(
      batch_pipelines(), [](const BatchPipeline& b) { return batch_problems(b, batch_pipelines()); },
      [](const BatchPipeline& b) {
        std::string r = b.per_query ? std::string("runs ") + b.per_query + " per query"
                                    : std::string(gemm_input_name(b.input)) + " tiles";
        if (b.fallback) r += "; falls back to " + std::string(b.fallback);
        return r;
      },
      batch_traits));
  // The rows the searchers rely on by role: checked, and resolved, with the last family.
  out.back().problems = [batch = out.back().problems] {
    std::vector<std::string> v = batch();
    for (std::string& r : role_problems()) v.push_back(std::move(r));
    return v;
  };
}

}  // namespace distancies
