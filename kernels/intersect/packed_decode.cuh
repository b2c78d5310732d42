// The GPU decode of packed posting lists (packed_decode.hpp): one warp a block of 128 ids.
#pragma once
#include "kernels/intersect/packed_decode.hpp"

namespace distancies {

// The calling lane's ids (positions 4 lane .. 4 lane + 3) of block `b` of the packed arrays, n
// ids whose first is `first`; every lane of the warp calls it.
__device__ __forceinline__ void decode_lane_ids(const std::uint32_t* words, const std::uint64_t* block_word,
                                                const std::uint8_t* block_bits, std::uint64_t b, int n,
                                                std::uint32_t first, std::uint32_t (&ids)[packed_decode::kIdsPerLane]) {
  const int lane = threadIdx.x % 32;
  std::uint32_t sums[packed_decode::kIdsPerLane];
  const std::uint32_t total = packed_decode::lane_sums(words + block_word[b], block_bits[b], n, lane, sums);
  std::uint32_t scan = total;  // inclusive scan of the lanes' totals
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const std::uint32_t up = __shfl_up_sync(0xffffffffu, scan, off);
    if (lane >= off) scan += up;
  }
  packed_decode::lane_ids(first, lane, scan - total, sums, ids);
}

// The packed lists as the device holds them (PackedLists's arrays) and the blocks to decode:
// job i decodes block jobs[i] of the packed arrays, n_ids[i] ids from anchors[first_at[i]], to
// out + out_at[i].
struct PackedDecodeArgs {
  const std::uint32_t* words;
  const std::uint32_t* anchors;
  const std::uint64_t* first_at;
  const std::uint64_t* block_word;
  const std::uint8_t* block_bits;
  const std::uint64_t* jobs;
  const std::uint64_t* out_at;
  const int* n_ids;
  long long job_count;
  std::uint32_t* out;
};

template <int kWarps>
__global__ void __launch_bounds__(kWarps * 32) decode_blocks_kernel(PackedDecodeArgs a) {
  const long long job = static_cast<long long>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (job >= a.job_count) return;  // whole warps leave together
  const int n = a.n_ids[job];
  std::uint32_t ids[packed_decode::kIdsPerLane];
  decode_lane_ids(a.words, a.block_word, a.block_bits, a.jobs[job], n, a.anchors[a.first_at[job]], ids);
  std::uint32_t* out = a.out + a.out_at[job];
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int t = 0; t < packed_decode::kIdsPerLane; ++t)
    if (packed_decode::kIdsPerLane * lane + t < n) out[packed_decode::kIdsPerLane * lane + t] = ids[t];
}

}  // namespace distancies
