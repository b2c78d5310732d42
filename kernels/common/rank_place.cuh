// The rank-count placement: a block orders entries whose rows are distinct (sentinels aside) by
// giving each its rank among them, the number of entries ranked before it in the order of
// kernels/common/ranking.hpp. Rows being distinct, ranks are distinct, so the rank is the entry's place
// in sorted order and no sort is needed. Sentinels all tie, so they are skipped instead: the
// output is filled with sentinels first, and the places no real entry takes keep them.
// O(m^2 / threads) comparisons: for the few hundred or few thousand entries in shared memory
// that the list selections (warp_merge.cuh, list_select.cuh) and the re-rank order.
#pragma once
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

struct ScoredRow {
  float s;
  int r;
};

struct RanksBefore {
  __device__ bool operator()(const ScoredRow& a, const ScoredRow& b) const { return ranks_before(a.s, a.r, b.s, b.r); }
};

// Entries as two arrays, similarities and rows.
struct SplitEntries {
  float* s;
  int* r;
  __device__ ScoredRow get(int i) const { return ScoredRow{s[i], r[i]}; }
  __device__ void put(int i, const ScoredRow& e) const {
    s[i] = e.s;
    r[i] = e.r;
  }
};

// Entries as one array of (similarity, row) pairs.
struct PackedEntries {
  ScoredRow* e;
  __device__ ScoredRow get(int i) const { return e[i]; }
  __device__ void put(int i, const ScoredRow& v) const { e[i] = v; }
};

// out[0..k) = sentinels; thread t writes t, t + stride, ... The caller synchronises (a block
// barrier) before place_by_rank writes over them.
template <class Out>
__device__ void fill_sentinels(const Out& out, int k, int t, int stride) {
  for (int i = t; i < k; i += stride) out.put(i, ScoredRow{kSentinelSim, kSentinelRow});
}

// Every real entry of in[0..m) whose rank among them is below k goes to out[rank]; out holds
// sentinels already (fill_sentinels, then a barrier) and does not overlap in. Thread t takes
// entries t, t + stride, ...; no barrier inside: synchronise before reading out.
template <class In, class Out>
__device__ void place_by_rank(const In& in, int m, const Out& out, int k, int t, int stride) {
  for (int i = t; i < m; i += stride) {
    const ScoredRow e = in.get(i);
    // Sentinels stay as filled in; a NaN (an exact score gone wrong) is never placed.
    if (e.r == kSentinelRow || e.s != e.s) continue;
    int rank = 0;
    for (int j = 0; j < m; ++j) rank += RanksBefore()(in.get(j), e);
    if (rank < k) out.put(rank, e);
  }
}

// The grid-wide form, for more entries than one block should rank: every block has staged all m
// entries in shared memory (then a barrier) and knows how many cannot be placed (`skipped`:
// sentinels and NaNs). The real entries take places 0 .. m - skipped - 1, so entry slot i past
// them (and below k) gets a sentinel, and entry i goes to its rank. kGroup consecutive threads
// rank one entry, each counting a strided share of the m (then a shuffle sum): one thread per
// entry left 1,024-8,192 entries to a few blocks doing m comparisons each (18-59 us at m = 1,024
// and 4,096 on an H100). Thread t of the grid (t = gthread) takes entry t / kGroup; every
// lane of the warp must call it (the shuffles). No two threads write the same place, so no
// barrier is needed between the sentinels and the entries. Returns the place given to entry
// gthread / kGroup (on the group's first thread; -1 elsewhere and when not placed).
template <int kGroup>
__device__ int place_staged_by_rank(const ScoredRow* e, int m, int skipped, int k, long long gthread, float* out_s,
                                    int* out_r) {
  static_assert(kGroup >= 1 && kGroup <= 32 && (kGroup & (kGroup - 1)) == 0, "a power of two within a warp");
  const long long i = gthread / kGroup;
  const int part = static_cast<int>(gthread % kGroup);
  if (part == 0 && i >= m - skipped && i < k) {
    out_s[i] = kSentinelSim;
    out_r[i] = kSentinelRow;
  }
  const ScoredRow me = i < m ? e[i] : ScoredRow{kSentinelSim, kSentinelRow};
  const bool real = i < m && !(me.r == kSentinelRow || me.s != me.s);
  int rank = 0;
  if (real)
    for (int j = part; j < m; j += kGroup) rank += RanksBefore()(e[j], me);  // sentinels and NaNs never rank before
#pragma unroll
  for (int off = kGroup / 2; off > 0; off /= 2) rank += __shfl_xor_sync(0xffffffffu, rank, off);
  if (real && part == 0 && rank < k) {
    out_s[rank] = me.s;
    out_r[rank] = me.r;
    return rank;
  }
  return -1;
}

// Threads placing max(m, k) entry slots with kGroup threads each.
__host__ __device__ constexpr long long staged_place_threads(int m, int k, int group) {
  return static_cast<long long>(m > k ? m : k) * group;
}

// Whether an entry cannot be placed (counted into place_staged_by_rank's `skipped`).
__device__ inline bool unplaceable(const ScoredRow& e) { return e.r == kSentinelRow || e.s != e.s; }

}  // namespace distancies
