// Pipelines: the study's versions V1-V4 and beyond, one line each. A pipeline is data: a dot
// variant, top-k stages, and the memory habits of its version.
#include <string>

#include "harness/error.hpp"
#include "variants/registry.hpp"

namespace distancies {

const std::vector<Pipeline>& pipelines() {
  // name, description, origin, dot, top-k stages, copy model per query, scratch per query,
  // sync each stage, pinned host buffers
  static const std::vector<Pipeline> table = {
      {"V1", "model copied host->device on every query; 1-thread dot; two-kernel top-k", "V1",
       "thread_per_row_dot", {"first_merge", "botched_merge_sort"}, true, true, true, false},
      {"V2", "model resident; pinned buffers; 1-thread dot; per-query allocation", "V2", "thread_per_row_dot",
       {"first_merge", "botched_merge_sort"}, false, true, true, true},
      {"V3", "8 threads/row, shared-memory reduction", "V3", "shared_reduce_dot",
       {"first_merge", "botched_merge_sort"}, false, true, true, true},
      {"V4", "8 threads/row, warp shuffles; no per-query allocation or needless sync", "V4", "warp_shuffle_dot",
       {"first_merge", "botched_merge_sort"}, false, false, false, true},
      {"V4_cub_sort", "V4's dot, then CUB's stable radix sort of every row as the top-k", "beyond the study",
       "warp_shuffle_dot", {"cub_radix_sort"}, false, false, false, true},
      {"V4_warp_select", "V4's dot, then per-warp top-k lists and a one-block select", "beyond the study",
       "warp_shuffle_dot", {"warp_select"}, false, false, false, true},
      {"V4_radix_select", "V4's dot, then a radix select of the k-th similarity and a one-block order", "beyond the study",
       "warp_shuffle_dot", {"radix_select"}, false, false, false, true},
      {"fused", "one pass: 16-byte warp dot + per-warp top-k in shared memory, one-block select", "beyond the study",
       nullptr, {"fused_scan_topk"}, false, false, false, true},
      {"fused_f16", "fused scan of an fp16 copy (half the bytes), exact fp32 re-rank; falls back to fused",
       "beyond the study", nullptr, {"reduced_scan_topk", "exact_rerank"}, false, false, false, true, Storage::F16,
       "fused"},
      {"fused_bf16", "fused scan of a bf16 copy (half the bytes), exact fp32 re-rank; falls back to fused",
       "beyond the study", nullptr, {"reduced_scan_topk", "exact_rerank"}, false, false, false, true, Storage::BF16,
       "fused"},
  };
  return table;
}

const std::vector<BatchPipeline>& batch_pipelines() {
  // name, description, origin, GEMM input, one-query pipeline instead of tiles, fallback, scores
  static const std::vector<BatchPipeline> table = {
      {"batch_fused_loop", "the one-query `fused` pipeline once per query (the baseline batching must beat)",
       "beyond the study", GemmInput::F32, "fused"},
      {"batch_sgemm", "fp32 SGEMM tiles + per-query top-K after each tile + exact fp32 re-rank", "beyond the study",
       GemmInput::F32},
      {"batch_tf32", "TF32 tensor-core tiles + per-query top-K + exact fp32 re-rank", "beyond the study",
       GemmInput::TF32, nullptr, "batch_sgemm"},
      {"batch_bf16", "bf16 tensor-core tiles over the bf16 copy + top-K + exact fp32 re-rank", "beyond the study",
       GemmInput::BF16, nullptr, "batch_sgemm"},
      {"batch_f16", "fp16 tensor-core tiles over the fp16 copy + top-K + exact fp32 re-rank", "beyond the study",
       GemmInput::F16, nullptr, "batch_sgemm"},
      {"batch_f16_h", "batch_f16 with the tiles' scores written as fp16 (half the score traffic)", "beyond the study",
       GemmInput::F16, nullptr, "batch_sgemm", Storage::F16},
  };
  return table;
}

namespace {

template <class T>
const T& find_named(const std::vector<T>& table, std::string_view name, const char* what) {
  std::string known;
  for (const T& t : table) {
    if (name == t.name) return t;
    known += known.empty() ? "" : ", ";
    known += t.name;
  }
  throw Error("unknown " + std::string(what) + " '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace

const DotVariant& dot_variant(std::string_view name) { return find_named(dot_variants(), name, "dot variant"); }
const TopkStage& topk_stage(std::string_view name) { return find_named(topk_stages(), name, "top-k stage"); }
const Pipeline& pipeline(std::string_view name) { return find_named(pipelines(), name, "pipeline"); }
const BatchPipeline& batch_pipeline(std::string_view name) {
  return find_named(batch_pipelines(), name, "batch pipeline");
}

}  // namespace distancies
