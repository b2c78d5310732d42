// Coarse grain (the study's 7.2): each thread takes kPer consecutive ids of the shortest list
// and looks for them in the other lists itself. Its start in each list comes from a binary
// search for its first id (the study's "precise search" that fixed the load imbalance of
// threads that started from the front). A block is one tile of one query; a batch is one
// launch over every tile of every query.
//   Svs:    list by list, a zipper walk per list (survivors only).
//   Adp:    id by id, a cursor per list, all lists for one id before the next.
//   Hash:   the id's bucket of each list, then a binary search inside the bucket.
//   Gallop: list by list, galloping from the cursor (long lists against short ones).
//   Bitmap: one bit test in lists that have a bitmap, galloping in the others.
#pragma once
#include <cub/block/block_reduce.cuh>

#include "kernels/intersect/intersect_args.cuh"
#include "kernels/intersect/list_search.cuh"

namespace distancies {

template <IntersectMethod M, int kThreads, int kPer>
__global__ void __launch_bounds__(kThreads) coarse_mark_kernel(IntersectArgs a) {
  static_assert(kThreads * kPer == kIntersectTile, "a block covers one tile");
  const IntersectTile tile = a.tiles[blockIdx.x];
  const DeviceQuery q = a.queries[tile.query];
  const unsigned* first = a.ids + a.offsets[q.terms[0]];
  const unsigned begin = tile.begin + threadIdx.x * kPer;
  unsigned e[kPer];
  unsigned alive = 0;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const bool in = begin + k < tile.end;
    e[k] = in ? __ldg(first + begin + k) : 0u;
    alive |= in ? 1u << k : 0u;
  }
  if (M == IntersectMethod::Adp) {
    unsigned cur[kIntersectMaxTerms];
#pragma unroll
    for (int s = 1; s < kIntersectMaxTerms; ++s)
      if (s < q.nterms && alive) {
        const unsigned long long o = a.offsets[q.terms[s]];
        cur[s] = lower_bound_in(a.ids + o, 0, static_cast<unsigned>(a.offsets[q.terms[s] + 1] - o), e[0]);
      }
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
#pragma unroll
      for (int s = 1; s < kIntersectMaxTerms; ++s)
        if (s < q.nterms && (alive >> k & 1u)) {
          const unsigned long long o = a.offsets[q.terms[s]];
          const unsigned n = static_cast<unsigned>(a.offsets[q.terms[s] + 1] - o);
          cur[s] = walk_from(a.ids + o, cur[s], n, e[k]);
          if (cur[s] == n || __ldg(a.ids + o + cur[s]) != e[k]) alive &= ~(1u << k);
        }
    }
  } else {
    for (int s = 1; s < q.nterms && alive; ++s) {
      const unsigned term = q.terms[s];
      const unsigned long long o = a.offsets[term];
      const unsigned* l = a.ids + o;
      const unsigned n = static_cast<unsigned>(a.offsets[term + 1] - o);
      if (M == IntersectMethod::Hash) {
        const unsigned* h = a.hash_starts + static_cast<unsigned long long>(term) * (kIntersectBuckets + 1);
#pragma unroll
        for (int k = 0; k < kPer; ++k)
          if (alive >> k & 1u) {
            const unsigned b = intersect_bucket(e[k], a.max_id);
            const unsigned hi = __ldg(h + b + 1);
            const unsigned p = lower_bound_in(l, __ldg(h + b), hi, e[k]);
            if (p == hi || __ldg(l + p) != e[k]) alive &= ~(1u << k);
          }
        continue;
      }
      const long long slot = M == IntersectMethod::Bitmap ? a.bitmap_slot[term] : -1;
      if (slot >= 0) {
        const unsigned* bits = a.bitmaps + static_cast<unsigned long long>(slot) * a.bitmap_words;
#pragma unroll
        for (int k = 0; k < kPer; ++k)
          if ((alive >> k & 1u) && !(__ldg(bits + (e[k] >> 5)) >> (e[k] & 31) & 1u)) alive &= ~(1u << k);
        continue;
      }
      unsigned c = lower_bound_in(l, 0, n, e[0]);  // e[0] <= every survivor (no dynamic register index)
#pragma unroll
      for (int k = 0; k < kPer; ++k)
        if (alive >> k & 1u) {
          c = M == IntersectMethod::Svs ? walk_from(l, c, n, e[k]) : gallop_from(l, c, n, e[k]);
          if (c == n || __ldg(l + c) != e[k]) alive &= ~(1u << k);
        }
    }
  }
#pragma unroll
  for (int k = 0; k < kPer; ++k)
    if (begin + k < tile.end) {
      a.cand[q.cand_base + begin + k] = e[k];
      a.flags[q.cand_base + begin + k] = alive >> k & 1u;
    }
  using Reduce = cub::BlockReduce<unsigned, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const unsigned found = Reduce(tmp).Sum(static_cast<unsigned>(__popc(alive)));
  if (threadIdx.x == 0) a.tile_counts[blockIdx.x] = found;
}

}  // namespace distancies
