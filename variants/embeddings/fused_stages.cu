// The fused single-pass top-k (kernels/embeddings/fused_scan_topk.cuh): policy and dispatch. Beyond
// kMaxK the per-warp lists would not fit in shared memory, so it becomes a separate dot and a
// radix select (large_k_select.hpp; CUB's sort of every row beyond kLargeKMax): still exact, not
// one pass.
#include <algorithm>
#include <utility>

#include "kernels/embeddings/float4_warp_dot.cuh"
#include "kernels/embeddings/fused_scan_topk.cuh"
#include "kernels/embeddings/warp_select.cuh"
#include "runtime/device.hpp"
#include "variants/embeddings/cub_sort.hpp"
#include "variants/embeddings/grid.hpp"
#include "variants/embeddings/large_k_select.hpp"
#include "variants/embeddings/list_select.hpp"
#include "variants/embeddings/policy.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {
namespace {

// Policy: variants/embeddings/policy.hpp.
using Scan = policy::Active::FusedScan;
constexpr int kWarps = Scan::kWarps;
constexpr int kRows = Scan::kRows;
constexpr int kSegs = Scan::kSegs;
constexpr int kBlocksPerSm = Scan::kBlocksPerSm;
constexpr int kMaxK = WarpTopk::kMaxK;

int scan_blocks(int n) { return persistent_blocks(n, kRows * kWarps, kBlocksPerSm); }

// Beyond kMaxK: the radix select up to kLargeKMax, CUB's sort of every row above.
std::size_t beyond_lists_temp(int n, int k) { return k <= kLargeKMax ? large_k_temp_bytes(n) : cub_sort_temp_bytes(n); }
void select_beyond_lists(TopkState& s, cudaStream_t stream) {
  if (s.k <= kLargeKMax) return large_k_select(s, stream);
  cub_sort_all(s, stream);
}

// One candidate list per block.
std::size_t fused_temp(int n, int k) {
  if (k > kMaxK) return beyond_lists_temp(n, k);
  return static_cast<std::size_t>(scan_blocks(n)) * k * (sizeof(float) + sizeof(int));
}

void run_fused(TopkState& s, cudaStream_t stream) {
  if (!s.model.dot) throw Error("fused_scan_topk needs the model and query (TopkState::model)");
  if (s.n == 0) return;
  const DotArgs& a = *s.model.dot;
  if (s.k > kMaxK && s.k <= kLargeKMax) {
    // Beyond the lists: the same scan writes every similarity (the lists' bits, so the reduced
    // pipelines' re-rank still reproduces them), then the radix select. Exact, not one pass.
    const std::size_t smem = a.ld * sizeof(float);
    if (smem > kDefaultDynamicSmemBytes)
      throw Error("fused_scan_topk: dimension too large for its shared-memory query");
    fused_scan_topk_kernel<kWarps, kRows, kSegs, kBlocksPerSm, true>
        <<<scan_blocks(s.n), kWarps * 32, smem, stream>>>(a, 0, s.sims, nullptr);
    CUDA_CHECK_LAUNCH();
    large_k_select_into(s.sims, nullptr, s.n, s.k, s.temp, s.alt_sims, s.alt_idx, stream);
    std::swap(s.sims, s.alt_sims);
    std::swap(s.idx, s.alt_idx);
    s.chunks = 1;
    return;
  }
  if (s.k > kMaxK) {  // beyond kLargeKMax: a dot into sims, then CUB's sort of every row
    DotArgs d = a;
    d.sims = s.sims;
    d.idx = s.idx;
    all_rows_dot().launch(d, stream);
    return cub_sort_all(s, stream);
  }
  const int blocks = scan_blocks(s.n);
  const int chunks = blocks;
  float* cand_s = static_cast<float*>(s.temp);
  int* cand_r = reinterpret_cast<int*>(cand_s + static_cast<std::size_t>(chunks) * s.k);
  const std::size_t scan_smem = a.ld * sizeof(float) + lists_bytes(kWarps, s.k);
  if (scan_smem > kDefaultDynamicSmemBytes)
    throw Error("fused_scan_topk: dimension too large for its shared-memory query");
  fused_scan_topk_kernel<kWarps, kRows, kSegs, kBlocksPerSm>
      <<<blocks, kWarps * 32, scan_smem, stream>>>(a, s.k, cand_s, cand_r);
  CUDA_CHECK_LAUNCH();
  launch_select_from_lists(cand_s, cand_r, chunks, s.k, s.sims, s.idx, stream);
  s.chunks = 1;
}

// Warp-select over the dot's similarity array: the same per-warp lists and merge, no dot.
constexpr int kSelectWarps = policy::Active::WarpSelect::kWarps;
constexpr int kSelectBlocksPerSm = policy::Active::WarpSelect::kBlocksPerSm;

int select_blocks(int n) { return persistent_blocks(n, 32 * kSelectWarps, kSelectBlocksPerSm); }

std::size_t select_temp(int n, int k) {
  if (k > kMaxK) return beyond_lists_temp(n, k);
  return static_cast<std::size_t>(select_blocks(n)) * k * (sizeof(float) + sizeof(int));
}

void run_warp_select(TopkState& s, cudaStream_t stream) {
  if (s.n == 0) return;
  if (s.k > kMaxK) return select_beyond_lists(s, stream);  // beyond kMaxK: exact, not one pass
  const int blocks = select_blocks(s.n);
  const int chunks = blocks;
  float* cand_s = static_cast<float*>(s.temp);
  int* cand_r = reinterpret_cast<int*>(cand_s + static_cast<std::size_t>(chunks) * s.k);
  const std::size_t smem = lists_bytes(kSelectWarps, s.k);
  warp_select_kernel<kSelectWarps>
      <<<blocks, kSelectWarps * 32, smem, stream>>>(s.sims, s.idx, s.n, s.k, cand_s, cand_r);
  CUDA_CHECK_LAUNCH();
  launch_select_from_lists(cand_s, cand_r, chunks, s.k, s.sims, s.idx, stream);
  s.chunks = 1;
}

}  // namespace

// Registered in topk_stages() (topk_stages.cu) through these entries.
TopkStage fused_scan_topk_stage() {
  return TopkStage{"fused_scan_topk",
                   "dot + per-warp top-k in one pass over the model, then a one-block select (k > 128: every "
                   "similarity, then the large-k radix select)",
                   "beyond the study"}
      .takes(StageData::Model)
      .leaves(StageData::TopK)
      .launched_by(run_fused, fused_temp)
      .reading_the_model();
}

TopkStage warp_select_stage() {
  return TopkStage{"warp_select",
                   "per-warp top-k lists in shared memory over the similarity array, one-block select (k > 128: the "
                   "large-k radix select)",
                   "beyond the study"}
      .takes(StageData::Similarities)
      .leaves(StageData::TopK)
      .launched_by(run_warp_select, select_temp);
}

}  // namespace distancies
