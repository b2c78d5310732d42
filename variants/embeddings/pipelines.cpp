// Pipelines: the study's versions V1-V4 and beyond, one line each. A pipeline is data: a dot
// variant, top-k stages, and the memory habits of its version.
#include <string>
#include <utility>
#include <vector>

#include "runtime/error.hpp"
#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {

namespace {

constexpr unsigned kPinned = MemoryHabits::kPinnedHost;
constexpr unsigned kScratch = MemoryHabits::kScratchPerQuery;
constexpr unsigned kSync = MemoryHabits::kSyncEachStage;
constexpr unsigned kCopyModel = MemoryHabits::kCopyModelEveryQuery;

// A pipeline's names resolved to rows; what does not resolve stays null (check_all says so).
void link(Pipeline& p) {
  p.dot_variant = p.dot ? dot_variants().find(p.dot) : nullptr;
  p.stages.clear();
  for (const char* s : p.topk) p.stages.push_back(topk_stages().find(s));
}

// The study's versions, in the order `sequence/` replays them.
std::vector<Pipeline> study_pipelines() {
  using P = Pipeline;
  const std::vector<const char*> study_topk{"first_merge", "botched_merge_sort"};
  return {
      P{"V1", "model copied host->device on every query; 1-thread dot; two-kernel top-k", "V1"}
          .scored_by("thread_per_row_dot")
          .ranked_by(study_topk)
          .with_habits(MemoryHabits(kCopyModel | kScratch | kSync))
          .in_study_sequence(),
      P{"V2", "model resident; pinned buffers; 1-thread dot; per-query allocation", "V2"}
          .scored_by("thread_per_row_dot")
          .ranked_by(study_topk)
          .with_habits(MemoryHabits(kScratch | kSync | kPinned))
          .in_study_sequence(),
      P{"V3", "8 threads/row, shared-memory reduction", "V3"}
          .scored_by("shared_reduce_dot")
          .ranked_by(study_topk)
          .with_habits(MemoryHabits(kScratch | kSync | kPinned))
          .in_study_sequence(),
      P{"V4", "8 threads/row, warp shuffles; no per-query allocation or needless sync", "V4"}
          .scored_by("warp_shuffle_dot")
          .ranked_by(study_topk)
          .with_habits(MemoryHabits(kPinned))
          .in_study_sequence(),
  };
}

// Beyond the study: other top-k stages after V4's dot, the fused scan, and the reduced copies
// with their exact re-rank (each falls back to `fused` where it cannot certify).
std::vector<Pipeline> later_pipelines() {
  using P = Pipeline;
  const char* beyond = "beyond the study";
  const MemoryHabits pinned(kPinned);
  const std::vector<const char*> reduced{"reduced_scan_topk", "exact_rerank"};
  return {
      P{"V4_cub_sort", "V4's dot, then CUB's stable radix sort of every row as the top-k", beyond}
          .scored_by("warp_shuffle_dot")
          .ranked_by({"cub_radix_sort"})
          .with_habits(pinned),
      P{"V4_warp_select", "V4's dot, then per-warp top-k lists and a one-block select", beyond}
          .scored_by("warp_shuffle_dot")
          .ranked_by({"warp_select"})
          .with_habits(pinned),
      P{"V4_radix_select", "V4's dot, then a radix select of the k-th similarity and a one-block order", beyond}
          .scored_by("warp_shuffle_dot")
          .ranked_by({"radix_select"})
          .with_habits(pinned),
      P{"fused", "one pass: 16-byte warp dot + per-warp top-k in shared memory, one-block select", beyond}
          .ranked_by({"fused_scan_topk"})
          .with_habits(pinned),
      P{"fused_f16", "fused scan of an fp16 copy (half the bytes), exact fp32 re-rank; falls back to fused", beyond}
          .ranked_by(reduced)
          .with_habits(pinned)
          .reads(Storage::F16)
          .falls_back_to("fused"),
      P{"fused_bf16", "fused scan of a bf16 copy (half the bytes), exact fp32 re-rank; falls back to fused", beyond}
          .ranked_by(reduced)
          .with_habits(pinned)
          .reads(Storage::BF16)
          .falls_back_to("fused"),
      P{"fused_i8",
        "fused scan of an int8 copy with a per-row scale (a quarter of the bytes), rows ranked by similarity plus "
        "their own error bound; exact fp32 re-rank; falls back to fused",
        beyond}
          .ranked_by(reduced)
          .with_habits(pinned)
          .reads(Storage::I8)
          .falls_back_to("fused"),
  };
}

Table<Pipeline>& pipeline_table() {
  static Table<Pipeline> table("embeddings", "pipeline", "pipeline", [] {
    std::vector<Pipeline> rows = study_pipelines();
    for (Pipeline& p : later_pipelines()) rows.push_back(std::move(p));
    return rows;
  }());
  static const bool linked = [] {
    for (const Pipeline& p : table.rows()) link(const_cast<Pipeline&>(p));
    for (const Pipeline& p : table.rows())
      const_cast<Pipeline&>(p).fallback_pipeline = p.fallback ? table.find(p.fallback) : nullptr;
    return true;
  }();
  (void)linked;
  return table;
}

void link(BatchPipeline& b, const Table<BatchPipeline>& all) {
  b.per_query_pipeline = b.per_query ? pipelines().find(b.per_query) : nullptr;
  b.fallback_pipeline = b.fallback ? all.find(b.fallback) : nullptr;
  b.scan_row = b.per_query || !b.scan ? nullptr : batch_scans().find(b.scan);
}

Table<BatchPipeline>& batch_table() {
  // name, description, origin, GEMM input; then what differs from the defaults, by name.
  // A query a reduced copy cannot certify is redone on the next copy up, then on the tensor-core
  // tiles, then in fp32 (docs/data.md: on anisotropic data the int8 bound fails where fp16 holds).
  using B = BatchPipeline;
  static Table<BatchPipeline> table(
      "embeddings", "batch", "batch pipeline",
      {
          B{"batch_fused_loop", "the one-query `fused` pipeline once per query (the baseline batching must beat)",
            "beyond the study", GemmInput::F32}
              .per_query_by("fused"),
          B{"batch_i8_loop",
            "the one-query `fused_i8` pipeline once per query (one read of the int8 copy a query: a batch of one or "
            "two needs no more)",
            "beyond the study", GemmInput::F32}
              .per_query_by("fused_i8"),
          B{"batch_sgemm", "fp32 SGEMM tiles + per-query top-K after each tile + exact fp32 re-rank",
            "beyond the study", GemmInput::F32},
          B{"batch_tf32", "TF32 tensor-core tiles + per-query top-K + exact fp32 re-rank", "beyond the study",
            GemmInput::TF32}
              .falls_back_to("batch_sgemm"),
          B{"batch_bf16", "bf16 tensor-core tiles over the bf16 copy + top-K + exact fp32 re-rank", "beyond the study",
            GemmInput::BF16}
              .falls_back_to("batch_sgemm"),
          B{"batch_f16", "fp16 tensor-core tiles over the fp16 copy + top-K + exact fp32 re-rank", "beyond the study",
            GemmInput::F16}
              .falls_back_to("batch_sgemm"),
          B{"batch_f16_h", "batch_f16 with the tiles' scores written as fp16 (half the score traffic)",
            "beyond the study", GemmInput::F16}
              .falls_back_to("batch_sgemm")
              .scores_as(Storage::F16),
          B{"batch_f16_fused",
            "fp16 tensor cores (WMMA) score each row of the fp16 copy once against up to 128 queries held on chip; "
            "per-query top-K kept in shared memory (no score matrix) + exact fp32 re-rank",
            "beyond the study", GemmInput::F16}
              .falls_back_to("batch_sgemm")
              .scanned_by("fused_tensor_core"),
          B{"batch_f16_filter",
            "each row of the fp16 copy read once into mma.sync fragments against the batch's queries; scores below a "
            "threshold seeded from a sample are dropped in registers, the rest selected per query + exact fp32 "
            "re-rank",
            "beyond the study", GemmInput::F16}
              .falls_back_to("batch_f16_h")
              .scanned_by("filtered_mma"),
          B{"batch_i8_filter",
            "batch_f16_filter's thresholds (fp16 sample and refine passes), then its last pass over a tiled int8 copy "
            "on the INT8 tensor cores (wgmma s8): one integer compare a score, candidates keyed by their upper bound "
            "+ exact fp32 re-rank",
            "beyond the study", GemmInput::F16}
              .falls_back_to("batch_f16_filter")
              .scanned_by("filtered_i8"),
      });
  static const bool linked = [] {
    for (const BatchPipeline& b : table.rows()) link(const_cast<BatchPipeline&>(b), table);
    return true;
  }();
  (void)linked;
  return table;
}

}  // namespace

const Table<Pipeline>& pipelines() { return pipeline_table(); }

const Pipeline& exact_pipeline() {
  static const Pipeline& row = pipelines().at("fused");
  return row;
}
const Pipeline& f16_one_query_pipeline() {
  static const Pipeline& row = pipelines().at("fused_f16");
  return row;
}
const BatchPipeline& exact_batch_loop() {
  static const BatchPipeline& row = batch_pipelines().at("batch_fused_loop");
  return row;
}
const DotVariant& all_rows_dot() {
  static const DotVariant& row = dot_variants().at("float4_warp_dot");
  return row;
}

// Each role resolved now, at start-up, not in the first search; a missing row is the look-up's own
// error (its name and the known ones).
std::vector<std::string> role_problems() {
  std::vector<std::string> out;
  for (void (*resolve)() : {+[] { exact_pipeline(); }, +[] { f16_one_query_pipeline(); }, +[] { exact_batch_loop(); },
                            +[] { all_rows_dot(); }, +[] { reduced_copy_row(Storage::F16); },
                            +[] { tiled_i8_copy_row(); }, +[] { centre_copy_row(); }}) {
    try {
      resolve();
    } catch (const Error& e) {
      out.push_back(std::string("a row the searchers rely on: ") + e.what());
    }
  }
  return out;
}
const Table<BatchPipeline>& batch_pipelines() { return batch_table(); }

const Pipeline& add_pipeline(Pipeline p) {
  Table<Pipeline>& t = pipeline_table();
  link(p);
  p.fallback_pipeline = p.fallback ? t.find(p.fallback) : nullptr;
  return t.add(std::move(p));
}

const BatchPipeline& add_batch_pipeline(BatchPipeline p) {
  Table<BatchPipeline>& t = batch_table();
  link(p, t);
  return t.add(std::move(p));
}

const DotVariant& dot_variant(std::string_view name) { return dot_variants().at(name); }
const TopkStage& topk_stage(std::string_view name) { return topk_stages().at(name); }
const Pipeline& pipeline(std::string_view name) { return pipelines().at(name); }
const BatchPipeline& batch_pipeline(std::string_view name) { return batch_pipelines().at(name); }

}  // namespace distancies
