// The GPU decode of packed posting lists (packed_decode.hpp): one warp a block of 128 ids.
#pragma once
#include "kernels/intersect/packed_decode.hpp"

namespace distancies {

// The packed lists as the device holds them (PackedLists's arrays) and the blocks to decode:
// job i decodes block jobs[i] of the packed arrays, n_ids[i] ids, to out + out_at[i].
struct PackedDecodeArgs {
  const std::uint32_t* words;
  const std::uint32_t* block_first;
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
  const int lane = threadIdx.x % 32;
  const std::uint64_t b = a.jobs[job];
  const int n = a.n_ids[job];
  std::uint32_t sums[packed_decode::kIdsPerLane];
  const std::uint32_t total = packed_decode::lane_sums(a.words + a.block_word[b], a.block_bits[b], n, lane, sums);
  std::uint32_t scan = total;  // inclusive scan of the lanes' totals
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const std::uint32_t up = __shfl_up_sync(0xffffffffu, scan, off);
    if (lane >= off) scan += up;
  }
  std::uint32_t ids[packed_decode::kIdsPerLane];
  packed_decode::lane_ids(a.block_first[b], lane, scan - total, sums, ids);
  std::uint32_t* out = a.out + a.out_at[job];
#pragma unroll
  for (int t = 0; t < packed_decode::kIdsPerLane; ++t) {
    const int p = packed_decode::kIdsPerLane * lane + t;
    if (p < n) out[p] = ids[t];
  }
}

}  // namespace distancies
