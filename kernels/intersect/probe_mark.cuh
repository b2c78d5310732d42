// Probe (beyond the study): a batch at the latency limit. The coarse kernels give a thread 8
// ids of the shortest list and search for them one after another, so a thread's chain of
// dependent loads is 8 searches long; here a thread takes kPer ids (4 in the registry) placed
// a block apart (coalesced reads of the shortest list, and the searches of one thread are
// independent, so their loads overlap), so the chains are short and many. Each id is looked for in each other list by
// one bit test where the list has a bitmap, else in its Hash(512) bucket by binary search. The survivors are compacted
// in the block (a block scan), in list order, at the tile's first candidate position: the answers are written once and
// no select pass follows.
#pragma once
#include <cub/block/block_scan.cuh>

#include "kernels/intersect/intersect_args.cuh"
#include "kernels/intersect/list_search.cuh"

namespace distancies {

// Clears bit k of `alive` for each of the thread's ids not set in the bitmap.
template <int kPer>
__device__ __forceinline__ unsigned probe_bitmap(const unsigned* bits, const unsigned (&e)[kPer], unsigned alive) {
#pragma unroll
  for (int k = 0; k < kPer; ++k)
    if ((alive >> k & 1u) && !(__ldg(bits + (e[k] >> 5)) >> (e[k] & 31) & 1u)) alive &= ~(1u << k);
  return alive;
}

// Each of the thread's live ids looked for in the query's other lists, as long as any lives: one
// bit test where a list has a bitmap, else search(term, alive), the row's own search of the list
// (it returns `alive` less the ids it did not find). Returns the survivors.
template <int kPer, class Search>
__device__ __forceinline__ unsigned probe_other_lists(const IntersectArgs& a, const DeviceQuery& q,
                                                      const unsigned (&e)[kPer], unsigned alive, Search search) {
  for (int s = 1; s < q.nterms && alive; ++s) {
    const unsigned term = q.terms[s];
    const long long slot = a.bitmap_slot[term];
    alive = slot >= 0 ? probe_bitmap<kPer>(a.bitmaps + static_cast<unsigned long long>(slot) * a.bitmap_words, e, alive)
                      : search(term, alive);
  }
  return alive;
}

// The survivors of the block's tile written at `out`, round k before round k + 1 and, within a
// round, by thread (the shortest list's order); their count to the tile's count.
template <int kThreads, int kPer>
__device__ __forceinline__ void write_survivors(const unsigned (&e)[kPer], unsigned alive, unsigned* out,
                                                unsigned* tile_count) {
  using Scan = cub::BlockScan<unsigned, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  unsigned base = 0;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    unsigned at = 0, total = 0;
    Scan(tmp).ExclusiveSum(alive >> k & 1u, at, total);
    if (alive >> k & 1u) out[base + at] = e[k];
    base += total;
    if (k + 1 < kPer) __syncthreads();  // tmp is reused
  }
  if (threadIdx.x == 0) *tile_count = base;
}

template <int kThreads, int kPer>
__global__ void __launch_bounds__(kThreads) probe_mark_kernel(IntersectArgs a) {
  static_assert(kThreads * kPer == kIntersectTile, "a block covers one tile");
  const IntersectTile tile = a.tiles[blockIdx.x];
  const DeviceQuery q = a.queries[tile.query];
  const unsigned* first = a.ids + a.offsets[q.terms[0]];
  unsigned e[kPer];
  unsigned alive = 0;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const unsigned pos = tile.begin + k * kThreads + threadIdx.x;
    const bool in = pos < tile.end;
    e[k] = in ? __ldg(first + pos) : 0u;
    alive |= in ? 1u << k : 0u;
  }
  alive = probe_other_lists<kPer>(a, q, e, alive, [&](unsigned term, unsigned live) {
    const unsigned* l = a.ids + a.offsets[term];
    const unsigned* h = a.hash_starts + static_cast<unsigned long long>(term) * (kIntersectBuckets + 1);
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      if (live >> k & 1u) {
        const unsigned b = intersect_bucket(e[k], a.max_id);
        const unsigned hi = __ldg(h + b + 1);
        const unsigned p = lower_bound_in(l, __ldg(h + b), hi, e[k]);
        if (p == hi || __ldg(l + p) != e[k]) live &= ~(1u << k);
      }
    return live;
  });
  write_survivors<kThreads, kPer>(e, alive, a.cand + q.cand_base + tile.begin, a.tile_counts + blockIdx.x);
}

}  // namespace distancies
