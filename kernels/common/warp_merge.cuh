// Merging sorted top-K lists with the whole warp: every element finds its output slot by a
// binary search in the other list (its rank there plus its own index), so a merge costs
// O(K/32 * log K) steps instead of K serial insertions. Ties (only sentinels can tie) go to
// list A first, which keeps slots distinct.
#pragma once
#include "kernels/common/launch.hpp"
#include "kernels/common/rank_place.cuh"
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

// out[0..K) = best K of sorted a[0..K) and b[0..K). out must not alias a or b.
__device__ inline void warp_merge_topk(const float* as, const int* ar, const float* bs, const int* br, int K, float* os,
                                       int* orr, int lane) {
  for (int i = lane; i < K; i += 32) {
    const float s = as[i];
    const int r = ar[i];
    int lo = 0, hi = K;  // entries of b strictly before a[i]
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (ranks_before(bs[mid], br[mid], s, r))
        lo = mid + 1;
      else
        hi = mid;
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
      if (!ranks_before(s, r, as[mid], ar[mid]))
        lo = mid + 1;
      else
        hi = mid;
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

// One block's per-warp lists and their merge scratch, carved from shared memory at `at`.
struct BlockLists {
  float* s;
  int* r;
  float* scr_s;
  int* scr_r;
};

__device__ inline BlockLists carve_block_lists(void* at, int warps, int k) {
  BlockLists l;
  l.s = static_cast<float*>(at);
  l.r = reinterpret_cast<int*>(l.s + warps * k);
  l.scr_s = reinterpret_cast<float*>(l.r + warps * k);
  l.scr_r = reinterpret_cast<int*>(l.scr_s + warps * k);
  return l;
}

// kWarps sorted lists of K in shared memory (list w at w*K), scratch of the same size: a tree
// of pairwise merges leaves the block's best K in list 0. Every thread of the block calls it.
template <int kWarps>
__device__ void block_merge_lists(const BlockLists& l, int K, int warp, int lane) {
  float *list_s = l.s, *scr_s = l.scr_s;
  int *list_r = l.r, *scr_r = l.scr_r;
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

// The same result as block_merge_lists + write_block_list in a few block-wide steps instead of
// log2(kWarps) dependent merges: the K-th best of the lists' first ceil(K / kWarps) entries
// bounds the K-th best of all from below, the entries at or above it (about K) are compacted
// into the scratch lists, and each one's rank among them is its place (place_by_rank). Rows
// must be distinct across the lists (sentinels aside). Every thread of the block calls it.
template <int kWarps>
__device__ void block_select_lists(const BlockLists& l, int K, float* out_s, int* out_r) {
  constexpr int kThreads = kWarps * 32;
  __shared__ float bound_s;
  __shared__ int bound_r, kept;
  const int t = threadIdx.x;
  const int per_list = ceil_div(K, kWarps);
  const int lead = kWarps * per_list;  // <= K + kWarps entries
  if (t == 0) {
    bound_s = kSentinelSim;
    bound_r = kSentinelRow;  // stays so when fewer than K leading entries are real
    kept = 0;
  }
  __syncthreads();
  for (int i = t; i < lead; i += kThreads) {
    const int at = (i / per_list) * K + i % per_list;
    const float s = l.s[at];
    const int r = l.r[at];
    int rank = 0;
    for (int j = 0; j < lead; ++j) {
      const int aj = (j / per_list) * K + j % per_list;
      rank += ranks_before(l.s[aj], l.r[aj], s, r);
    }
    if (rank == K - 1 && r != kSentinelRow) {
      bound_s = s;
      bound_r = r;
    }
  }
  __syncthreads();
  const float bs = bound_s;
  const int br = bound_r;
  for (int i = t; i < kWarps * K; i += kThreads) {
    const float s = l.s[i];
    const int r = l.r[i];
    if (!ranks_before(bs, br, s, r)) {
      const int slot = atomicAdd(&kept, 1);  // at most kWarps * K: the scratch holds them all
      l.scr_s[slot] = s;
      l.scr_r[slot] = r;
    }
  }
  __syncthreads();
  const int m = kept;
  fill_sentinels(SplitEntries{l.s, l.r}, K, t, kThreads);
  __syncthreads();
  place_by_rank(SplitEntries{l.scr_s, l.scr_r}, m, SplitEntries{l.s, l.r}, K, t, kThreads);
  __syncthreads();
  for (int i = t; i < K; i += kThreads) {
    out_s[i] = l.s[i];
    out_r[i] = l.r[i];
  }
}

// After block_merge_lists: warp 0 writes the block's best K to out.
__device__ inline void write_block_list(const BlockLists& l, int K, int warp, int lane, float* out_s, int* out_r) {
  if (warp == 0) warp_copy(l.s, l.r, K, out_s, out_r, lane);
}

}  // namespace distancies
