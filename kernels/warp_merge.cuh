// Merging sorted top-K lists with the whole warp: every element finds its output slot by a
// binary search in the other list (its rank there plus its own index), so a merge costs
// O(K/32 * log K) steps instead of K serial insertions. Ties (only sentinels can tie) go to
// list A first, which keeps slots distinct.
#pragma once
#include "kernels/dot_args.cuh"

namespace distancies {

// out[0..K) = best K of sorted a[0..K) and b[0..K). out must not alias a or b.
__device__ inline void warp_merge_topk(const float* as, const int* ar, const float* bs, const int* br, int K,
                                       float* os, int* orr, int lane) {
  for (int i = lane; i < K; i += 32) {
    const float s = as[i];
    const int r = ar[i];
    int lo = 0, hi = K;  // entries of b strictly before a[i]
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (ranks_before(bs[mid], br[mid], s, r)) lo = mid + 1; else hi = mid;
    }
    if (i + lo < K) {
      os[i + lo] = s;
      orr[i + lo] = r;
    }
  }
  for (int j = lane; j < K; j += 32) {
    const float s = bs[j];
    const int r = br[j];
    int lo = 0, hi = K;  // entries of a before or equal to b[j]
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (!ranks_before(s, r, as[mid], ar[mid])) lo = mid + 1; else hi = mid;
    }
    if (j + lo < K) {
      os[j + lo] = s;
      orr[j + lo] = r;
    }
  }
  __syncwarp();
}

__device__ inline void warp_copy(const float* s, const int* r, int K, float* ds, int* dr, int lane) {
  for (int i = lane; i < K; i += 32) {
    ds[i] = s[i];
    dr[i] = r[i];
  }
  __syncwarp();
}

// kWarps sorted lists of K in shared memory (list w at w*K), scratch of the same size: a tree
// of pairwise merges leaves the block's best K in list 0. Every thread of the block calls it.
template <int kWarps>
__device__ void block_merge_lists(float* list_s, int* list_r, float* scr_s, int* scr_r, int K, int warp, int lane) {
  for (int width = 1; width < kWarps; width *= 2) {
    __syncthreads();
    if (warp % (2 * width) == 0 && warp + width < kWarps) {
      float* a_s = list_s + warp * K;
      int* a_r = list_r + warp * K;
      warp_merge_topk(a_s, a_r, list_s + (warp + width) * K, list_r + (warp + width) * K, K, scr_s + warp * K,
                      scr_r + warp * K, lane);
      warp_copy(scr_s + warp * K, scr_r + warp * K, K, a_s, a_r, lane);
    }
  }
  __syncthreads();
}

}  // namespace distancies
