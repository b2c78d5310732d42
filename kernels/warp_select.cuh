// Top k of an existing similarity array, FAISS-style: each warp streams a strided share of the
// array 32 entries at a time and keeps its own top k (WarpTopk); lanes whose entry beats the
// warp's current k-th are inserted one by one (a ballot finds them; after the first rounds
// there are almost none). The block merges its warps' lists; merge_candidates_kernel the blocks'.
#pragma once
#include "kernels/warp_merge.cuh"
#include "kernels/warp_topk.cuh"

namespace distancies {

template <int kWarps>
__global__ void __launch_bounds__(kWarps * 32) warp_select_kernel(const float* sims, const int* idx, int n, int k,
                                                                  float* cand_s, int* cand_r) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* list_s = reinterpret_cast<float*>(smem);
  int* list_r = reinterpret_cast<int*>(list_s + kWarps * k);
  float* scr_s = reinterpret_cast<float*>(list_r + kWarps * k);
  int* scr_r = reinterpret_cast<int*>(scr_s + kWarps * k);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  WarpTopk top{list_s + warp * k, list_r + warp * k, k};
  top.clear(lane);
  const long long gw = static_cast<long long>(blockIdx.x) * kWarps + warp;
  const long long nw = static_cast<long long>(gridDim.x) * kWarps;
  for (long long base = gw * 32; base < n; base += nw * 32) {
    const long long i = base + lane;
    const float s = i < n ? sims[i] : kSentinelSim;
    const int r = i < n ? idx[i] : kSentinelRow;
    unsigned want = __ballot_sync(0xffffffffu, top.admits(s, r));
    while (want) {
      const int src = __ffs(want) - 1;
      want &= want - 1;
      const float ss = __shfl_sync(0xffffffffu, s, src);
      const int rr = __shfl_sync(0xffffffffu, r, src);
      if (top.admits(ss, rr)) top.insert(ss, rr, lane);  // the threshold may have risen meanwhile
    }
  }
  block_merge_lists<kWarps>(list_s, list_r, scr_s, scr_r, k, warp, lane);
  if (warp == 0) warp_copy(list_s, list_r, k, cand_s + static_cast<long long>(blockIdx.x) * k,
                           cand_r + static_cast<long long>(blockIdx.x) * k, lane);
}

}  // namespace distancies
