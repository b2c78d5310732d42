// Top-k stages: the study's two kernels and CUB's radix sort as a library baseline.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <utility>

#include "kernels/embeddings/botched_merge_sort.cuh"
#include "kernels/embeddings/first_merge.cuh"
#include "runtime/launch.hpp"
#include "variants/embeddings/cub_sort.hpp"
#include "variants/embeddings/policy.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {
namespace {

constexpr int kThreads = policy::Active::StudyTopk::kThreads;

int chunks_of(int n, int k) { return ceil_div(n, k); }

std::size_t no_temp(int, int) { return 0; }

void run_first_merge(TopkState& s, cudaStream_t stream) {
  s.chunks = chunks_of(s.n, s.k);
  if (s.chunks == 0) return;
  first_merge_kernel<<<blocks_for(s.chunks, kThreads), kThreads, 0, stream>>>(s.sims, s.idx, s.n, s.k);
  CUDA_CHECK_LAUNCH();
}

void run_botched_merge_sort(TopkState& s, cudaStream_t stream) {
  if (s.chunks == 0 && s.n > 0) throw Error("botched_merge_sort needs first_merge's sorted chunks");
  while (s.chunks > 1) {
    const int out_chunks = ceil_div(s.chunks, 2);
    botched_merge_kernel<<<blocks_for(out_chunks, kThreads), kThreads, 0, stream>>>(s.sims, s.idx, s.chunks, s.k,
                                                                                    s.alt_sims, s.alt_idx);
    CUDA_CHECK_LAUNCH();
    std::swap(s.sims, s.alt_sims);
    std::swap(s.idx, s.alt_idx);
    s.chunks = out_chunks;
  }
}

std::size_t cub_sort_temp(int n, int) { return cub_sort_temp_bytes(n); }

void run_cub_radix_sort(TopkState& s, cudaStream_t stream) {
  if (s.n > 0) cub_sort_all(s, stream);
}

}  // namespace

std::size_t cub_sort_temp_bytes(int n) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, static_cast<const float*>(nullptr),
                                                       static_cast<float*>(nullptr), static_cast<const int*>(nullptr),
                                                       static_cast<int*>(nullptr), n));
  return bytes;
}

// A stable descending sort keeps equal similarities in row order: our tie rule.
void cub_sort_all(TopkState& s, cudaStream_t stream) {
  std::size_t bytes = s.temp_bytes;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(s.temp, bytes, s.sims, s.alt_sims, s.idx, s.alt_idx, s.n, 0, 32,
                                                       stream));
  CUDA_CHECK_LAUNCH();
  std::swap(s.sims, s.alt_sims);
  std::swap(s.idx, s.alt_idx);
  s.chunks = 1;
}

TopkStage fused_scan_topk_stage();    // variants/embeddings/fused_stages.cu
TopkStage warp_select_stage();        // variants/embeddings/fused_stages.cu
TopkStage radix_select_stage();       // variants/embeddings/radix_select_stage.cu
TopkStage reduced_scan_topk_stage();  // variants/embeddings/reduced_stages.cu
TopkStage exact_rerank_stage();       // variants/embeddings/reduced_stages.cu

namespace {

using D = StageData;

Table<TopkStage>& stage_table() {
  using S = TopkStage;
  static Table<TopkStage> table(
      "embeddings", "topk", "top-k stage",
      {
          S{"first_merge", "insertion-sort every chunk of k in place (1 thread/chunk)", "V1-V4"}
              .takes(D::Similarities)
              .leaves(D::SortedChunks)
              .launched_by(run_first_merge, no_temp),
          S{"botched_merge_sort", "merge pairs of sorted k-chunks until one is left", "V1-V4"}
              .takes(D::SortedChunks)
              .leaves(D::TopK)
              .follows("first_merge")
              .launched_by(run_botched_merge_sort, no_temp),
          S{"cub_radix_sort", "CUB DeviceRadixSort::SortPairsDescending of all rows (stable)", "beyond the study"}
              .takes(D::Similarities)
              .leaves(D::TopK)
              .launched_by(run_cub_radix_sort, cub_sort_temp),
          fused_scan_topk_stage(),
          warp_select_stage(),
          radix_select_stage(),
          reduced_scan_topk_stage(),
          exact_rerank_stage(),
      });
  return table;
}

}  // namespace

const Table<TopkStage>& topk_stages() { return stage_table(); }
const TopkStage& add_topk_stage(TopkStage s) { return stage_table().add(std::move(s)); }

std::size_t topk_capacity(int n, int k) {
  const std::size_t chunked = static_cast<std::size_t>(chunks_of(n, k)) * static_cast<std::size_t>(k);
  return std::max(std::max(chunked, std::size_t(1)),
                  std::max(static_cast<std::size_t>(n), static_cast<std::size_t>(k)));
}

}  // namespace distancies
