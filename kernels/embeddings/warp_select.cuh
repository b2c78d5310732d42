// Top k of an existing similarity array, FAISS-style: each warp streams a strided share of the
// array 32 entries at a time and keeps its own top k (WarpTopk); lanes whose entry beats the
// warp's current k-th are inserted one by one (a ballot finds them; after the first rounds
// there are almost none). The block selects from its warps' lists; select_from_lists_kernel picks from the blocks'.
#pragma once
#include "kernels/common/warp_merge.cuh"
#include "kernels/common/warp_topk.cuh"

namespace distancies {

template <int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    warp_select_kernel(const float* sims, const int* idx, int n, int k, float* cand_s, int* cand_r) {
  extern __shared__ __align__(16) unsigned char smem[];
  const BlockLists lists = carve_block_lists(smem, kWarps, k);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  WarpTopk top{lists.s + warp * k, lists.r + warp * k, k};
  top.clear(lane);
  const long long gw = static_cast<long long>(blockIdx.x) * kWarps + warp;
  const long long nw = static_cast<long long>(gridDim.x) * kWarps;
  for (long long base = gw * 32; base < n; base += nw * 32) {
    const long long i = base + lane;
    const float s = i < n ? sims[i] : kSentinelSim;
    top.offer(s, i < n ? idx[i] : kSentinelRow, lane);
  }
  block_select_lists<kWarps>(lists, k, cand_s + static_cast<long long>(blockIdx.x) * k,
                             cand_r + static_cast<long long>(blockIdx.x) * k);
}

}  // namespace distancies
