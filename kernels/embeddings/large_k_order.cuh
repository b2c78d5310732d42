// Large k (up to a few thousand): the k rows a radix select chose are ordered by their ranks.
// The chosen rows are those strictly above the k-th largest key plus the first `remaining` rows at
// it (indices in row order, so ties go to the smaller row, as everywhere): exactly min(k, n) rows,
// distinct, so each one's rank among them is its place and no sort is needed. Every block stages
// all of them in shared memory (k x 8 bytes) and each thread ranks one: O(k^2 / threads)
// comparisons, kGroup threads to an entry (rank_place.cuh).
#pragma once
#include "kernels/common/rank_place.cuh"
#include "kernels/common/ranking.hpp"
#include "kernels/embeddings/radix_select.cuh"

namespace distancies {

template <int kThreads, int kGroup>
__global__ void __launch_bounds__(kThreads)
    order_chosen_kernel(const float* sims, const int* idx, const int* above, const int* at, const RadixState* st,
                        int kk, int k, float* out_s, int* out_r) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int skipped;
  ScoredRow* e = reinterpret_cast<ScoredRow*>(smem);
  if (threadIdx.x == 0) skipped = 0;
  __syncthreads();
  const int from_above = kk - st->remaining;  // rows strictly above the k-th key
  int mine = 0;
  for (int i = threadIdx.x; i < kk; i += kThreads) {
    const int src = i < from_above ? above[i] : at[i - from_above];
    e[i] = ScoredRow{sims[src], idx ? idx[src] : src};  // no idx: the index is the row
    mine += unplaceable(e[i]);                          // a NaN: ranks_before never puts one first
  }
  if (mine) atomicAdd(&skipped, mine);
  __syncthreads();
  place_staged_by_rank<kGroup>(e, kk, skipped, k, static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x, out_s,
                               out_r);
}

}  // namespace distancies
