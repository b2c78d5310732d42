// One packed block (variants/intersect/packed_lists.hpp) decoded by a warp, four ids a lane: the
// per-lane steps, shared by the kernel (packed_decode.cuh) and the host's emulation of it (the
// tests run every width through them without a GPU). Id p of a block is
//   first + p + (the gaps of positions 1 .. p),
// so a lane sums the gaps of its four positions, the warp scans the lanes' totals, and each lane
// adds its exclusive prefix. Unsigned arithmetic: every partial sum is an id less a smaller one.
#pragma once
#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace distancies::packed_decode {

constexpr int kIdsPerLane = 4;  // 128 ids a block over 32 lanes

// Gap j (the one before position j + 1) of a block packed at `bits` bits (0 .. 32); reads the
// second word only where the gap crosses into it.
DISTANCIES_HD inline std::uint32_t gap(const std::uint32_t* words, int bits, int j) {
  if (bits == 0) return 0u;
  const unsigned pos = static_cast<unsigned>(j) * static_cast<unsigned>(bits);
  const unsigned shift = pos % 32u;
  std::uint64_t two = words[pos / 32u];
  if (shift + static_cast<unsigned>(bits) > 32u) two |= static_cast<std::uint64_t>(words[pos / 32u + 1u]) << 32;
  const std::uint64_t mask = bits == 32 ? 0xffffffffull : (1ull << bits) - 1ull;
  return static_cast<std::uint32_t>((two >> shift) & mask);
}

// Lane `lane`'s inclusive sums of the gaps before its positions 4 lane .. 4 lane + 3 (0 past the
// block's n ids and at position 0); returns their total, the lane's share of the warp's scan.
DISTANCIES_HD inline std::uint32_t lane_sums(const std::uint32_t* words, int bits, int n, int lane,
                                             std::uint32_t (&sums)[kIdsPerLane]) {
  std::uint32_t run = 0;
  for (int t = 0; t < kIdsPerLane; ++t) {
    const int p = kIdsPerLane * lane + t;
    run += (p >= 1 && p < n) ? gap(words, bits, p - 1) : 0u;
    sums[t] = run;
  }
  return run;
}

// The lane's ids from its sums and the exclusive scan of the lanes' totals before it.
DISTANCIES_HD inline void lane_ids(std::uint32_t first, int lane, std::uint32_t before,
                                   const std::uint32_t (&sums)[kIdsPerLane], std::uint32_t (&ids)[kIdsPerLane]) {
  for (int t = 0; t < kIdsPerLane; ++t)
    ids[t] = first + static_cast<std::uint32_t>(kIdsPerLane * lane + t) + before + sums[t];
}

}  // namespace distancies::packed_decode
