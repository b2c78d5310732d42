// Merge-path partitioning (beyond the study): a query's two shortest lists A and B are seen as
// their merge, and every thread takes kItems consecutive steps of it, so every thread does the
// same work however the ids fall (the coarse grain splits only A, and a thread whose ids span
// a long stretch of B walks further). A thread finds its start on the merge by a binary search
// along its diagonal, then zips: an id of A is taken when it is <= the current id of B, and is
// in B when equal. Survivors are looked for in the remaining lists by galloping. A block is
// kThreads * kItems steps of one query's merge.
#pragma once
#include <cub/block/block_reduce.cuh>

#include "kernels/intersect/intersect_args.cuh"
#include "kernels/intersect/list_search.cuh"

namespace distancies {

// How many ids of A are among the first `diag` steps of the merge (A before equal B).
__device__ __forceinline__ unsigned merge_path_split(const unsigned* A, unsigned na, const unsigned* B, unsigned nb,
                                                     unsigned diag) {
  unsigned lo = diag > nb ? diag - nb : 0u, hi = min(diag, na);
  while (lo < hi) {
    const unsigned mid = lo + (hi - lo) / 2;
    if (__ldg(A + mid) <= __ldg(B + diag - 1 - mid))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Tiles here are ranges of merge steps [begin, end) of their query (0 .. |A| + |B|).
template <int kThreads, int kItems>
__global__ void __launch_bounds__(kThreads) merge_path_mark_kernel(IntersectArgs a) {
  static_assert(kThreads * kItems == kIntersectTile, "a block covers one tile");
  const IntersectTile tile = a.tiles[blockIdx.x];
  const DeviceQuery q = a.queries[tile.query];
  const unsigned long long oa = a.offsets[q.terms[0]];
  const unsigned* A = a.ids + oa;
  const unsigned na = static_cast<unsigned>(a.offsets[q.terms[0] + 1] - oa);
  const unsigned long long ob = q.nterms > 1 ? a.offsets[q.terms[1]] : 0ull;
  const unsigned* B = a.ids + ob;
  const unsigned nb = q.nterms > 1 ? static_cast<unsigned>(a.offsets[q.terms[1] + 1] - ob) : 0u;
  const unsigned d0 = tile.begin + threadIdx.x * kItems;
  unsigned found = 0;
  if (d0 < tile.end) {
    const unsigned d1 = min(d0 + kItems, tile.end);
    unsigned i = merge_path_split(A, na, B, nb, d0), j = d0 - i;
    unsigned cur[kIntersectMaxTerms];
#pragma unroll
    for (int s = 0; s < kIntersectMaxTerms; ++s) cur[s] = 0xFFFFFFFFu;  // not yet placed
    for (unsigned d = d0; d < d1; ++d) {
      const bool take_a = i < na && (j >= nb || __ldg(A + i) <= __ldg(B + j));
      if (!take_a) {
        ++j;
        continue;
      }
      const unsigned x = __ldg(A + i);
      bool in = q.nterms == 1 || (j < nb && __ldg(B + j) == x);
#pragma unroll
      for (int s = 2; s < kIntersectMaxTerms; ++s)
        if (s < q.nterms && in) {
          const unsigned long long o = a.offsets[q.terms[s]];
          const unsigned n = static_cast<unsigned>(a.offsets[q.terms[s] + 1] - o);
          cur[s] = cur[s] == 0xFFFFFFFFu ? lower_bound_in(a.ids + o, 0, n, x) : gallop_from(a.ids + o, cur[s], n, x);
          in = cur[s] < n && __ldg(a.ids + o + cur[s]) == x;
        }
      a.cand[q.cand_base + i] = x;
      a.flags[q.cand_base + i] = in;
      found += in;
      ++i;
    }
  }
  using Reduce = cub::BlockReduce<unsigned, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const unsigned total = Reduce(tmp).Sum(found);
  if (threadIdx.x == 0) a.tile_counts[blockIdx.x] = total;
}

}  // namespace distancies
