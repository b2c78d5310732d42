// Fine grain (the study's 7.3, "one id against many elements at once"): a warp takes
// kIntersectTile / kWarps consecutive ids of the shortest list and, for one id at a time,
// compares it with 32 consecutive ids of another list in one step (a ballot finds the first
// that is not smaller). The study launched a kernel per comparison of 1,024 elements and
// copied a flag back each time; here the whole comparison loop stays in the warp and a batch
// is one launch. The cursors only move forward, so a warp reads its share of every other list
// once, 128 bytes a step.
//   Svs:  list by list over the surviving ids.
//   Adp:  id by id over all lists.
//   Hash: id by id, each cursor first jumped to the id's bucket.
#pragma once
#include <cub/block/block_reduce.cuh>

#include "kernels/intersect/intersect_args.cuh"
#include "kernels/intersect/list_search.cuh"

namespace distancies {

// From cursor c, the first position whose id is >= x (n when none), 32 ids a step; *hit says
// whether that id is x. Every lane of the warp calls it with the same arguments.
__device__ __forceinline__ unsigned warp_seek(const unsigned* l, unsigned c, unsigned n, unsigned x, bool* hit) {
  const unsigned lane = threadIdx.x & 31u;
  for (; c < n; c += 32) {
    const bool in = c + lane < n;
    const unsigned v = in ? __ldg(l + c + lane) : 0u;
    const unsigned ge = __ballot_sync(0xffffffffu, in && v >= x);
    if (ge) {
      const int first = __ffs(ge) - 1;
      *hit = __shfl_sync(0xffffffffu, v, first) == x;
      return c + first;
    }
  }
  *hit = false;
  return n;
}

template <IntersectMethod M, int kThreads>
__global__ void __launch_bounds__(kThreads) fine_mark_kernel(IntersectArgs a) {
  constexpr int kWarps = kThreads / 32;
  constexpr unsigned kChunk = kIntersectTile / kWarps;
  static_assert(kIntersectTile % kWarps == 0 && kChunk % 32 == 0, "warps split a tile evenly");
  __shared__ unsigned ids[kWarps][kChunk];
  __shared__ unsigned char alive[kWarps][kChunk];
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
  const IntersectTile tile = a.tiles[blockIdx.x];
  const DeviceQuery q = a.queries[tile.query];
  const unsigned* first = a.ids + a.offsets[q.terms[0]];
  const unsigned begin = tile.begin + warp * kChunk;
  const unsigned count = begin < tile.end ? min(kChunk, tile.end - begin) : 0u;
  for (unsigned i = lane; i < count; i += 32) {
    ids[warp][i] = __ldg(first + begin + i);
    alive[warp][i] = 1;
  }
  __syncwarp();
  if (count > 0) {
    if (M == IntersectMethod::Svs) {
      for (int s = 1; s < q.nterms; ++s) {
        const unsigned long long o = a.offsets[q.terms[s]];
        const unsigned n = static_cast<unsigned>(a.offsets[q.terms[s] + 1] - o);
        unsigned c = lower_bound_in(a.ids + o, 0, n, ids[warp][0]);
        for (unsigned i = 0; i < count; ++i) {
          if (!alive[warp][i]) continue;
          bool hit;
          c = warp_seek(a.ids + o, c, n, ids[warp][i], &hit);
          __syncwarp();
          if (lane == 0 && !hit) alive[warp][i] = 0;
          __syncwarp();
        }
      }
    } else {
      unsigned cur[kIntersectMaxTerms];
#pragma unroll
      for (int s = 1; s < kIntersectMaxTerms; ++s)
        if (s < q.nterms) {
          const unsigned long long o = a.offsets[q.terms[s]];
          cur[s] = lower_bound_in(a.ids + o, 0, static_cast<unsigned>(a.offsets[q.terms[s] + 1] - o), ids[warp][0]);
        }
      for (unsigned i = 0; i < count; ++i) {
        const unsigned x = ids[warp][i];
        bool all = true;
#pragma unroll
        for (int s = 1; s < kIntersectMaxTerms; ++s)
          if (s < q.nterms && all) {
            const unsigned term = q.terms[s];
            const unsigned long long o = a.offsets[term];
            const unsigned n = static_cast<unsigned>(a.offsets[term + 1] - o);
            unsigned from = cur[s];
            unsigned stop = n;
            if (M == IntersectMethod::Hash) {  // only the id's bucket can hold it
              const unsigned* h = a.hash_starts + static_cast<unsigned long long>(term) * (kIntersectBuckets + 1);
              const unsigned b = intersect_bucket(x, a.max_id);
              from = max(from, __ldg(h + b));
              stop = __ldg(h + b + 1);
            }
            bool hit;
            cur[s] = warp_seek(a.ids + o, from, stop, x, &hit);
            all = hit;
          }
        if (lane == 0 && !all) alive[warp][i] = 0;
      }
      __syncwarp();
    }
  }
  unsigned found = 0;
  for (unsigned i = lane; i < count; i += 32) {
    a.cand[q.cand_base + begin + i] = ids[warp][i];
    a.flags[q.cand_base + begin + i] = alive[warp][i];
    found += alive[warp][i];
  }
  using Reduce = cub::BlockReduce<unsigned, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const unsigned total = Reduce(tmp).Sum(found);
  if (threadIdx.x == 0) a.tile_counts[blockIdx.x] = total;
}

}  // namespace distancies
