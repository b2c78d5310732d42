// Packed (beyond the study): Probe over the packed copy of the lists (packed_decode.hpp). The
// block's warps first decode its tile of the shortest list, a packed block of 128 ids each, into
// shared memory; then each thread takes kPer of those ids a block apart, as Probe does, and looks
// for each in the other lists: one bit test where a list has a bitmap (bitmaps are a dense list's
// compressed form), else the list's anchors searched and at most 7 gaps summed. The survivors
// are compacted as Probe's are.
#pragma once
#include "kernels/intersect/packed_decode.cuh"
#include "kernels/intersect/probe_mark.cuh"

namespace distancies {

__device__ __forceinline__ packed_decode::ListView packed_list(const PackedIndexArgs& p, unsigned term) {
  const std::uint64_t b = p.list_block[term];
  return {p.words, p.block_word + b, p.block_bits + b, p.anchors + p.list_anchor[term], p.lengths[term]};
}

template <int kThreads, int kPer>
__global__ void __launch_bounds__(kThreads) packed_probe_mark_kernel(IntersectArgs a) {
  static_assert(kThreads * kPer == kIntersectTile, "a block covers one tile");
  static_assert(kThreads / 32 * packed_decode::kBlockIds == kIntersectTile, "a warp decodes one packed block");
  const IntersectTile tile = a.tiles[blockIdx.x];  // tiles start at multiples of kIntersectTile
  const DeviceQuery q = a.queries[tile.query];
  const PackedIndexArgs& p = a.packed;
  __shared__ __align__(16) unsigned shortest[kIntersectTile];
  const unsigned warp_begin = tile.begin + threadIdx.x / 32 * packed_decode::kBlockIds;
  if (warp_begin < tile.end) {  // whole warps; each lane's four ids in one 16-byte store
    const unsigned term = q.terms[0];
    std::uint32_t ids[packed_decode::kIdsPerLane];
    decode_lane_ids(p.words, p.block_word, p.block_bits, p.list_block[term] + warp_begin / packed_decode::kBlockIds,
                    static_cast<int>(min(tile.end - warp_begin, unsigned(packed_decode::kBlockIds))),
                    p.anchors[p.list_anchor[term] + warp_begin / packed_decode::kAnchorIds], ids);
    reinterpret_cast<uint4*>(shortest + (warp_begin - tile.begin))[threadIdx.x % 32] =
        make_uint4(ids[0], ids[1], ids[2], ids[3]);  // past the block's n ids: never read
  }
  __syncthreads();
  unsigned e[kPer];
  unsigned alive = 0;
#pragma unroll
  for (int k = 0; k < kPer; ++k) {
    const unsigned at = k * kThreads + threadIdx.x;
    const bool in = tile.begin + at < tile.end;
    e[k] = in ? shortest[at] : 0u;
    alive |= in ? 1u << k : 0u;
  }
  alive = probe_other_lists<kPer>(a, q, e, alive, [&](unsigned term, unsigned live) {
    const packed_decode::ListView l = packed_list(p, term);
#pragma unroll
    for (int k = 0; k < kPer; ++k)
      if ((live >> k & 1u) && !packed_decode::contains(l, e[k])) live &= ~(1u << k);
    return live;
  });
  write_survivors<kThreads, kPer>(e, alive, a.cand + q.cand_base + tile.begin, a.tile_counts + blockIdx.x);
}

}  // namespace distancies
