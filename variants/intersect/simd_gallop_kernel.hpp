// The SIMD galloping intersection of two sorted lists, written once and compiled per instruction
// set: simd_gallop_portable.cpp and simd_gallop_avx2.cpp include it inside their own anonymous
// namespace after defining block_has(p, a) (is `a` among the kBlock ids at p) and match8(a, b)
// (bit t set: a[t] is among b[0, 8), every pair compared at once). Raw pointers
// only, no standard-library templates: the AVX2 copy must not lend AVX2 code to shared inline
// functions the portable path would then call.
//
// For each id `a` of the short list the cursor in the long list gallops over whole blocks
// (exponential steps on the blocks' last ids, then a binary search between the last two steps)
// to the first block whose last id is >= a, and one block compare says whether `a` is there:
// cost grows with the log of the gap, and the final comparisons are kBlock at once. Lists of
// similar lengths (the long one under kMergeRatio times the short) are merged 8 by 8 instead:
// all 64 pairs of two 8-id blocks compared at once, the block with the smaller last id
// advanced, so there is one branch per 8 ids instead of a search per id.
#pragma once

constexpr std::size_t kBlock = 32;
constexpr std::size_t kMergeRatio = 8;

// The first of `full` whole blocks at p whose last id is >= a; `full` when there is none.
inline std::size_t find_block(const std::uint32_t* p, std::size_t full, std::uint32_t a) {
  auto last = [p](std::size_t b) { return p[b * kBlock + kBlock - 1]; };
  if (full == 0 || last(0) >= a) return 0;
  std::size_t lo = 0, hi = 1;  // last(lo) < a; last(hi) >= a, or hi == full (past the end)
  while (hi < full && last(hi) < a) {
    lo = hi;
    hi *= 2;
  }
  if (hi > full) hi = full;
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (last(mid) < a)
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

// s[0, n) and l[0, m) sorted, strictly increasing; writes the common ids to out (which may be
// s: an id is written at or before where it was read) and returns their count.
inline std::size_t gallop_pair_impl(const std::uint32_t* s, std::size_t n, const std::uint32_t* l, std::size_t m,
                                    std::uint32_t* out) {
  std::size_t k = 0, j = 0;  // every id of l before j is below the current id of s
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t a = s[i];
    const std::size_t full = (m - j) / kBlock;
    const std::size_t b = find_block(l + j, full, a);
    if (b < full) {
      j += b * kBlock;
      if (block_has(l + j, a)) out[k++] = a;
      continue;
    }
    j += full * kBlock;  // the tail, under kBlock ids: one at a time
    while (j < m && l[j] < a) ++j;
    if (j == m) break;  // l has nothing left: no later id of s can match
    if (l[j] == a) out[k++] = a;
  }
  return k;
}

// The 8-by-8 block merge of s[0, n) and l[0, m), then the galloping for what is left under a
// block. out may be s: the short list's current block is read from a copy, and every write
// lands before the next block.
inline std::size_t merge_pair_impl(const std::uint32_t* s, std::size_t n, const std::uint32_t* l, std::size_t m,
                                   std::uint32_t* out) {
  std::size_t i = 0, j = 0, k = 0;
  std::uint32_t blk[8];
  if (n >= 8)
    for (int t = 0; t < 8; ++t) blk[t] = s[t];
  while (i + 8 <= n && j + 8 <= m) {
    for (unsigned hit = match8(blk, l + j); hit; hit &= hit - 1) out[k++] = blk[__builtin_ctz(hit)];
    const std::uint32_t smax = blk[7], lmax = l[j + 7];
    if (lmax <= smax) j += 8;
    if (smax <= lmax) {
      i += 8;
      if (i + 8 <= n)
        for (int t = 0; t < 8; ++t) blk[t] = s[i + t];
    }
  }
  return k + gallop_pair_impl(s + i, n - i, l + j, m - j, out + k);
}

inline std::size_t intersect_pair_impl(const std::uint32_t* s, std::size_t n, const std::uint32_t* l, std::size_t m,
                                       std::uint32_t* out) {
  return m < kMergeRatio * n ? merge_pair_impl(s, n, l, m, out) : gallop_pair_impl(s, n, l, m, out);
}
