// The best K of many sorted K-lists (one per scan block) in one block. A chain of pairwise
// merges (merge_lists_block) costs microseconds per list on one SM, tens of microseconds for
// 264 lists. Instead: the K-th best of the lists' leading entries is a lower bound on the K-th
// best of all (they are K of all the entries); one coalesced pass keeps every entry ranked at or above
// it (usually little more than K: the best entries are spread over many lists); those are
// ordered by a rank count. Ties by the thousand (more survivors than the pool) fall back to
// pairwise merges. The select_lists fixtures compare the ways to find the bound (BoundBy).
#pragma once
#include <cub/block/block_merge_sort.cuh>

#include <type_traits>

#include "kernels/common/launch.hpp"
#include "kernels/common/rank_place.cuh"
#include "kernels/common/warp_merge.cuh"
#include "kernels/common/warp_topk.cuh"

namespace distancies {

// Pairwise merges: each of the first kWarps warps folds a strided share of the lists into its
// own, then a tree. Every thread of the block calls it (the tree synchronises the block).
template <int kWarps>
__device__ void merge_lists_block(const float* cand_s, const int* cand_r, int chunks, int K, const BlockLists& lists,
                                  float* out_s, int* out_r) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp < kWarps) {
    float* my_s = lists.s + warp * K;
    int* my_r = lists.r + warp * K;
    for (int i = lane; i < K; i += 32) {
      my_s[i] = kSentinelSim;
      my_r[i] = kSentinelRow;
    }
    __syncwarp();
    for (int c = warp; c < chunks; c += kWarps) {
      const long long off = static_cast<long long>(c) * K;
      warp_merge_topk(my_s, my_r, cand_s + off, cand_r + off, K, lists.scr_s + warp * K, lists.scr_r + warp * K, lane);
      warp_copy(lists.scr_s + warp * K, lists.scr_r + warp * K, K, my_s, my_r, lane);
    }
  }
  block_merge_lists<kWarps>(lists, K, warp, lane);
  write_block_list(lists, K, warp, lane, out_s, out_r);
}

// Sorts the 2 x blockDim.x entries of `a` (shared memory) best first.
__device__ inline void bitonic_sort_block(ScoredRow* a) {
  const int n = 2 * blockDim.x, t = threadIdx.x;
  for (int size = 2; size <= n; size *= 2)
    for (int stride = size / 2; stride > 0; stride /= 2) {
      __syncthreads();
      const int i = 2 * t - (t & (stride - 1)), j = i + stride;  // i has the stride bit clear
      const ScoredRow x = a[i], y = a[j];
      const bool best_first = (i & size) == 0;
      if (best_first ? RanksBefore()(y, x) : RanksBefore()(x, y)) {
        a[i] = y;
        a[j] = x;
      }
    }
  __syncthreads();
}

// How the lower bound is found: the rank of each list's head among the heads (about K + a few
// survivors when there are many more lists than K), or the K-th of up to 2,048 leading entries
// sorted by our bitonic sort or by CUB's BlockMergeSort (tighter, but a block-wide sort).
enum class BoundBy { kHeadRanks, kBitonicSort, kCubMergeSort };

// out = the best K (K <= 128) of `chunks` sorted lists of K at cand + c * K; out may be in
// shared memory (read it after a barrier). Every thread of the block (kThreads) calls it.
template <int kThreads, BoundBy kBound>
__device__ void select_from_lists_block(const float* cand_s, const int* cand_r, int chunks, int K, float* out_s,
                                        int* out_r) {
  constexpr int kItems = 2;
  constexpr int kPool = kThreads * kItems;
  constexpr int kFallbackWarps = 8;
  constexpr bool kCub = kBound == BoundBy::kCubMergeSort;
  static_assert(kPool >= 2 * kFallbackWarps * 128, "the fallback's lists fit in the pool");
  using Sort = cub::BlockMergeSort<ScoredRow, kThreads, kItems>;
  __shared__ typename std::conditional<kCub, typename Sort::TempStorage, char>::type sort_storage;
  __shared__ __align__(16) unsigned char pool_bytes[kPool * sizeof(ScoredRow)];
  __shared__ ScoredRow best[WarpTopk::kMaxK];
  __shared__ ScoredRow bound;
  __shared__ int kept;
  ScoredRow* pool = reinterpret_cast<ScoredRow*>(pool_bytes);
  const ScoredRow none{kSentinelSim, kSentinelRow};
  const int t = threadIdx.x;
  auto entry = [&](long long i) { return ScoredRow{cand_s[i], cand_r[i]}; };

  // 1. A lower bound on the K-th best: the K-th best of a subset of at least K entries.
  if constexpr (kBound == BoundBy::kHeadRanks) {
    const int per_list = ceil_div(K, chunks);  // more than one only when chunks < K
    const int heads = min(chunks * per_list, kThreads);
    if (t < heads) pool[t] = entry(static_cast<long long>(t / per_list) * K + t % per_list);
    if (t == 0) bound = none;  // stays so when fewer than K heads are real
    __syncthreads();
    if (t < heads) {
      const ScoredRow e = pool[t];
      int rank = 0;
      for (int j = 0; j < heads; ++j) rank += RanksBefore()(pool[j], e);
      if (rank == K - 1 && e.r != kSentinelRow) bound = e;
    }
  } else {
    const int per_list = max(1, min(K, kPool / max(chunks, 1)));
    const long long firsts = min(static_cast<long long>(chunks) * per_list, static_cast<long long>(kPool));
    ScoredRow item[kItems];
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const int i = t * kItems + u;
      item[u] = i < firsts ? entry(static_cast<long long>(i / per_list) * K + i % per_list) : none;
    }
    if constexpr (kCub) {
      Sort(sort_storage).Sort(item, RanksBefore());
#pragma unroll
      for (int u = 0; u < kItems; ++u)
        if (t * kItems + u == K - 1) bound = item[u];
    } else {
#pragma unroll
      for (int u = 0; u < kItems; ++u) pool[t * kItems + u] = item[u];
      bitonic_sort_block(pool);
      if (t == 0) bound = pool[K - 1];
    }
  }
  fill_sentinels(PackedEntries{best}, K, t, kThreads);
  if (t == 0) kept = 0;
  __syncthreads();

  // 2. Every entry ranked at or above the bound; all of the best K are among them.
  const ScoredRow b = bound;
  const long long n = static_cast<long long>(chunks) * K;
#pragma unroll 8
  for (long long i = t; i < n; i += kThreads) {
    const ScoredRow e = entry(i);
    if (!ranks_before(b.s, b.r, e.s, e.r) && e.r != kSentinelRow) {  // (out starts as sentinels)
      const int slot = atomicAdd(&kept, 1);
      if (slot < kPool) pool[slot] = e;
    }
  }
  __syncthreads();
  const int m = kept;
  if (m > kPool) {  // the fallback: every thread takes this branch (m is the block's)
    merge_lists_block<kFallbackWarps>(cand_s, cand_r, chunks, K, carve_block_lists(pool_bytes, kFallbackWarps, K),
                                      out_s, out_r);
    return;
  }

  // 3. The survivors in order.
  if constexpr (kCub) {
    ScoredRow item[kItems];
#pragma unroll
    for (int u = 0; u < kItems; ++u) {
      const int i = t * kItems + u;
      item[u] = i < m ? pool[i] : none;
    }
    __syncthreads();  // the storage of the first sort is reused
    Sort(sort_storage).Sort(item, RanksBefore());
#pragma unroll
    for (int u = 0; u < kItems; ++u)
      if (t * kItems + u < K) best[t * kItems + u] = item[u];
  } else {
    // A survivor's place is the number of survivors ranked before it (rows are distinct).
    place_by_rank(PackedEntries{pool}, m, PackedEntries{best}, K, t, kThreads);
  }
  __syncthreads();
  for (int i = t; i < K; i += kThreads) {
    out_s[i] = best[i].s;
    out_r[i] = best[i].r;
  }
}

template <int kThreads, BoundBy kBound>
__global__ void __launch_bounds__(kThreads)
    select_from_lists_kernel(const float* cand_s, const int* cand_r, int chunks, int K, float* out_s, int* out_r) {
  select_from_lists_block<kThreads, kBound>(cand_s, cand_r, chunks, K, out_s, out_r);
}

// The pairwise merges alone, for comparison (and the fallback's own test).
template <int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    pairwise_merge_kernel(const float* cand_s, const int* cand_r, int chunks, int K, float* out_s, int* out_r) {
  extern __shared__ __align__(16) unsigned char smem[];
  merge_lists_block<kWarps>(cand_s, cand_r, chunks, K, carve_block_lists(smem, kWarps, K), out_s, out_r);
}

// 1,024 threads: 2,048 entries per sort.
constexpr int kListSelectThreads = 1024;

}  // namespace distancies
