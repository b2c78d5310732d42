#include "variants/embeddings/list_select.hpp"

#include "kernels/common/list_select.cuh"
#include "runtime/cuda_check.hpp"
#include "variants/embeddings/grid.hpp"
#include "variants/embeddings/policy.hpp"

namespace distancies {
namespace {

template <BoundBy kBound>
void bound_and_filter(const float* cand_s, const int* cand_r, int chunks, int K, float* out_s, int* out_r,
                      cudaStream_t stream) {
  select_from_lists_kernel<kListSelectThreads, kBound>
      <<<1, kListSelectThreads, 0, stream>>>(cand_s, cand_r, chunks, K, out_s, out_r);
  CUDA_CHECK_LAUNCH();
}

constexpr int kMergeWarps = policy::Active::ListMerge::kWarps;

void pairwise(const float* cand_s, const int* cand_r, int chunks, int K, float* out_s, int* out_r,
              cudaStream_t stream) {
  pairwise_merge_kernel<kMergeWarps>
      <<<1, kMergeWarps * 32, lists_bytes(kMergeWarps, K), stream>>>(cand_s, cand_r, chunks, K, out_s, out_r);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

const registry::Table<ListSelector>& list_selectors() {
  static const registry::Table<ListSelector> table(
      "embeddings", "list_select", "list selector",
      {
          {"head_rank_bound",
           "K-th best list head (rank count) bounds the rest; one filter pass; rank count of the survivors",
           "beyond the study", bound_and_filter<BoundBy::kHeadRanks>},
          {"bitonic_bound", "K-th of up to 2,048 leading entries (bitonic sort) bounds the rest; filter; rank count",
           "beyond the study", bound_and_filter<BoundBy::kBitonicSort>},
          {"cub_merge_sort_bound", "the same, CUB BlockMergeSort sorting the leading entries and the survivors",
           "beyond the study", bound_and_filter<BoundBy::kCubMergeSort>},
          {"pairwise_merge", "16 warps fold the lists by warp-parallel merges, then a tree (until #5's last step)",
           "beyond the study", pairwise},
      });
  return table;
}

void launch_select_from_lists(const float* cand_s, const int* cand_r, int chunks, int K, float* out_s, int* out_r,
                              cudaStream_t stream) {
  list_selectors().front().launch(cand_s, cand_r, chunks, K, out_s, out_r, stream);
}

}  // namespace distancies
