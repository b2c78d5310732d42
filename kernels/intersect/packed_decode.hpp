// Packed posting lists (variants/intersect/packed_lists.hpp) read on the device, in steps shared
// by the kernels and the host's emulation of them (the tests run every width through them without
// a GPU).
// - A block decoded by a warp, four ids a lane. Id p of a block is
//     first + p + (the gaps of positions 1 .. p),
//   so a lane sums the gaps of its four positions, the warp scans the lanes' totals, and each lane
//   adds its exclusive prefix.
// - An id looked for by one thread: the list's last anchor not above it (a binary search), then
//   at most kAnchorIds - 1 gaps summed from there.
// A list's anchors are consecutive: anchor i is its id at position i kAnchorIds.
// Unsigned arithmetic: every partial sum is an id less a smaller one.
#pragma once
#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace distancies::packed_decode {

constexpr int kBlockIds = 128;
constexpr int kIdsPerLane = kBlockIds / 32;
constexpr int kAnchorIds = 8;  // an id kept whole every kAnchorIds of a list
constexpr int kAnchorsPerBlock = kBlockIds / kAnchorIds;

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

// One list as a search reads it: the arrays from its first block on, and its length.
struct ListView {
  const std::uint32_t* words;       // every block's gaps (block_word indexes it)
  const std::uint64_t* block_word;  // from the list's first block
  const std::uint8_t* block_bits;   // from the list's first block
  const std::uint32_t* anchors;     // the list's
  std::uint64_t length;
};

// The last of a list's n anchors not above x (a[0] <= x): first a guess of where x would sit were
// the anchors evenly spread (posting lists nearly are), then galloping from it to bracket x, then
// a binary search inside the bracket. A few dependent loads where a binary search over a long
// list's anchors takes log2 of their count; no worse than twice that on any list.
DISTANCIES_HD inline std::uint64_t last_anchor_at_most(const std::uint32_t* a, std::uint64_t n, std::uint32_t x) {
  const std::uint32_t first = a[0], last = a[n - 1];
  if (x >= last) return n - 1;
  // first <= x < last, so n >= 2 and the guess is below n - 1 (the product stays under 2^59).
  const std::uint64_t g = std::uint64_t(x - first) * (n - 1) / (std::uint64_t(last - first) + 1);
  std::uint64_t lo, hi, step = 1;  // a[lo] <= x < a[hi]
  if (a[g] <= x) {
    lo = g;
    hi = g + 1;
    while (a[hi] <= x) {  // a[n - 1] > x stops it
      lo = hi;
      step *= 2;
      hi = lo + step < n - 1 ? lo + step : n - 1;
    }
  } else {  // g >= 1, since a[0] <= x < a[g]
    hi = g;
    lo = g - 1;
    while (a[lo] > x) {  // a[0] <= x stops it
      hi = lo;
      step *= 2;
      lo = lo > step ? lo - step : 0;
    }
  }
  while (hi - lo > 1) {
    const std::uint64_t mid = (lo + hi) / 2;
    if (a[mid] <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// Whether x is one of the list's ids: the last anchor not above it, then the gaps after that
// anchor summed until x is reached or passed, read through a 64-bit window (a word loaded every
// 32 / bits gaps).
DISTANCIES_HD inline bool contains(const ListView& l, std::uint32_t x) {
  const std::uint64_t n_anchors = (l.length + kAnchorIds - 1) / kAnchorIds;
  if (n_anchors == 0 || x < l.anchors[0]) return false;
  const std::uint64_t at = last_anchor_at_most(l.anchors, n_anchors, x);
  const std::uint64_t block = at / kAnchorsPerBlock;
  const std::uint64_t left = l.length - block * kBlockIds;
  const int in_block = left < std::uint64_t(kBlockIds) ? static_cast<int>(left) : kBlockIds;
  const int start = static_cast<int>(at % kAnchorsPerBlock) * kAnchorIds;
  const int gaps = (start + kAnchorIds < in_block ? start + kAnchorIds : in_block) - start - 1;  // after the anchor
  std::uint32_t v = l.anchors[at];
  if (v == x || gaps <= 0) return v == x;  // (a block of one id has no word to read)
  const int bits = l.block_bits[block];
  if (bits == 0) return x - v <= static_cast<std::uint32_t>(gaps);  // consecutive ids from the anchor
  const std::uint32_t* w = l.words + l.block_word[block];
  const std::uint64_t mask = bits == 32 ? 0xffffffffull : (1ull << bits) - 1ull;
  const unsigned pos = static_cast<unsigned>(start) * static_cast<unsigned>(bits);  // gap start's first bit
  unsigned word = pos / 32u;
  std::uint64_t window = w[word] >> (pos % 32u);
  int have = 32 - static_cast<int>(pos % 32u);
  for (int i = 0; i < gaps && v < x; ++i) {
    if (have < bits) {  // the gap runs into the next word, which the block has
      window |= std::uint64_t(w[++word]) << have;
      have += 32;
    }
    v += static_cast<std::uint32_t>(window & mask) + 1u;
    window >>= bits;
    have -= bits;
  }
  return v == x;
}

}  // namespace distancies::packed_decode
