// Staged windows (beyond the study): a block takes a tile of 1,024 ids of the shortest list;
// for each other list it finds, once, the window of that list the tile's ids can fall in (two
// binary searches), reads the window into shared memory with coalesced loads, kWindow ids at a
// time, and each thread binary-searches its ids there. So every list is read about once, in
// full 128-byte lines, and the per-id searches cost shared-memory latency, not global. A window
// longer than kMaxStaged ids (a list far longer than the shortest) is galloped through instead,
// and a list that has a bitmap costs one bit test an id. A block stops when none of its ids
// survive.
#pragma once
#include <cub/block/block_reduce.cuh>

#include "kernels/intersect/intersect_args.cuh"
#include "kernels/intersect/list_search.cuh"

namespace distancies {

template <int kThreads, int kPer, int kWindow, int kMaxStaged>
__global__ void __launch_bounds__(kThreads) staged_mark_kernel(IntersectArgs a) {
  static_assert(kThreads * kPer == kIntersectTile, "a block covers one tile");
  __shared__ unsigned win[kWindow];
  __shared__ unsigned bounds[2];
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
  const unsigned tile_lo = __ldg(first + tile.begin), tile_hi = __ldg(first + tile.end - 1);
  for (int s = 1; s < q.nterms; ++s) {
    if (!__syncthreads_or(alive != 0)) break;  // also: every thread is done with bounds and win
    const unsigned term = q.terms[s];
    const unsigned long long o = a.offsets[term];
    const unsigned* l = a.ids + o;
    const unsigned n = static_cast<unsigned>(a.offsets[term + 1] - o);
    const long long slot = a.bitmap_slot[term];
    if (slot >= 0) {
      const unsigned* bits = a.bitmaps + static_cast<unsigned long long>(slot) * a.bitmap_words;
#pragma unroll
      for (int k = 0; k < kPer; ++k)
        if ((alive >> k & 1u) && !(__ldg(bits + (e[k] >> 5)) >> (e[k] & 31) & 1u)) alive &= ~(1u << k);
      continue;
    }
    if (threadIdx.x == 0) bounds[0] = lower_bound_in(l, 0, n, tile_lo);
    if (threadIdx.x == 32) bounds[1] = upper_bound_in(l, 0, n, tile_hi);
    __syncthreads();
    const unsigned lo = bounds[0], hi = bounds[1];
    if (hi - lo > static_cast<unsigned>(kMaxStaged)) {  // a long window: gallop through it
      if (alive) {
        unsigned c = lower_bound_in(l, lo, hi, e[0]);
#pragma unroll
        for (int k = 0; k < kPer; ++k)
          if (alive >> k & 1u) {
            c = gallop_from(l, c, hi, e[k]);
            if (c == hi || __ldg(l + c) != e[k]) alive &= ~(1u << k);
          }
      }
      continue;
    }
    unsigned hit = 0;
    for (unsigned base = lo; base < hi; base += kWindow) {  // the same trips for every thread
      const unsigned m = min(static_cast<unsigned>(kWindow), hi - base);
      __syncthreads();  // the last chunk's readers are done
      for (unsigned i = threadIdx.x; i < m; i += kThreads) win[i] = __ldg(l + base + i);
      __syncthreads();
      const unsigned wmin = win[0], wmax = win[m - 1];
#pragma unroll
      for (int k = 0; k < kPer; ++k)
        if ((alive >> k & 1u) && e[k] >= wmin && e[k] <= wmax) {
          unsigned a0 = 0, a1 = m;
          while (a0 < a1) {
            const unsigned mid = (a0 + a1) / 2;
            if (win[mid] < e[k])
              a0 = mid + 1;
            else
              a1 = mid;
          }
          if (a0 < m && win[a0] == e[k]) hit |= 1u << k;
        }
    }
    alive &= hit;
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
