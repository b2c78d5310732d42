// A warp's running top k (k <= 128), kept sorted (best first) in shared memory. Candidates arrive as
// warp-uniform values; only one that beats the current k-th entry costs an insertion, which
// after the first few thousand rows is rare (about k * ln(rows / k) times per warp).
#pragma once
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

struct WarpTopk {
  static constexpr int kMaxK = 128;
  static constexpr int kPerLane = kMaxK / 32;
  float* sims;  // k <= kMaxK entries in shared memory
  int* rows;
  int k;
  float last_sim = kSentinelSim;  // the k-th entry, cached in registers by every lane
  int last_row = kSentinelRow;

  __device__ void clear(int lane) {
    for (int i = lane; i < k; i += 32) {
      sims[i] = kSentinelSim;
      rows[i] = kSentinelRow;
    }
    __syncwarp();
  }

  __device__ bool admits(float s, int r) const { return ranks_before(s, r, last_sim, last_row); }

  // Warp-uniform call. The lanes find the slot with one ballot per 32 entries and shift the
  // tail in parallel (k <= kMaxK), so an insertion costs O(k / 32), not O(k).
  __device__ void insert(float s, int r, int lane) {
    int pos = 0;
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int i = u * 32 + lane;
      const bool before = i < k && ranks_before(sims[i], rows[i], s, r);
      pos += __popc(__ballot_sync(0xffffffffu, before));
    }
    float keep_s[kPerLane];
    int keep_r[kPerLane];
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int i = u * 32 + lane;
      if (i >= pos && i < k - 1) {
        keep_s[u] = sims[i];
        keep_r[u] = rows[i];
      }
    }
    __syncwarp();
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int i = u * 32 + lane;
      if (i >= pos && i < k - 1) {
        sims[i + 1] = keep_s[u];
        rows[i + 1] = keep_r[u];
      }
    }
    if (lane == 0) {
      sims[pos] = s;
      rows[pos] = r;
    }
    __syncwarp();
    last_sim = sims[k - 1];
    last_row = rows[k - 1];
    __syncwarp();  // every lane has read before the next insertion writes
  }

  // Every lane with `keep` offers one entry (rows distinct from each other's and the list's); all go
  // in at once: each finds its place by counting the offered entries ranked before it plus a
  // binary search in the list, each listed entry moves down by the offered entries ranked before
  // it, and what lands at k or beyond drops out. One pass for up to 32 entries, instead of up to
  // 32 insertions (a block's first tiles fill its lists with nearly every row). Warp-uniform call.
  __device__ void merge(float s, int r, bool keep, int lane) {
    const unsigned m = __ballot_sync(0xffffffffu, keep);
    if (!m) return;
    float old_s[kPerLane];
    int old_r[kPerLane], old_before[kPerLane];
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int i = u * 32 + lane;
      old_s[u] = i < k ? sims[i] : kSentinelSim;
      old_r[u] = i < k ? rows[i] : kSentinelRow;
      old_before[u] = 0;
    }
    int new_before = 0;
    for (unsigned left = m; left; left &= left - 1) {
      const int src = __ffs(left) - 1;
      const float ns = __shfl_sync(0xffffffffu, s, src);
      const int nr = __shfl_sync(0xffffffffu, r, src);
      new_before += ranks_before(ns, nr, s, r);
#pragma unroll
      for (int u = 0; u < kPerLane; ++u) old_before[u] += ranks_before(ns, nr, old_s[u], old_r[u]);
    }
    int lo = 0, hi = k;  // listed entries ranked before this lane's
    if (keep)
      while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (ranks_before(sims[mid], rows[mid], s, r))
          lo = mid + 1;
        else
          hi = mid;
      }
    __syncwarp();  // every read of the list is done
#pragma unroll
    for (int u = 0; u < kPerLane; ++u) {
      const int i = u * 32 + lane, to = i + old_before[u];
      if (i < k && to < k) {
        sims[to] = old_s[u];
        rows[to] = old_r[u];
      }
    }
    if (keep && lo + new_before < k) {
      sims[lo + new_before] = s;
      rows[lo + new_before] = r;
    }
    __syncwarp();
    last_sim = sims[k - 1];
    last_row = rows[k - 1];
    __syncwarp();  // every lane has read before the next merge writes
  }

  // Every lane offers one entry; those that beat the k-th go in one by one (a ballot finds
  // them; past the first rounds there are almost none), or, when more than kMergeAbove do (the
  // first rounds fill the list with nearly every row), all at once by merge(). Warp-uniform call.
  static constexpr int kMergeAbove = 2;
  __device__ void offer(float s, int r, int lane) {
    unsigned want = __ballot_sync(0xffffffffu, admits(s, r));
    if (__popc(want) > kMergeAbove) {
      merge(s, r, admits(s, r), lane);
      return;
    }
    while (want) {
      const int src = __ffs(want) - 1;
      want &= want - 1;
      const float ss = __shfl_sync(0xffffffffu, s, src);
      const int rr = __shfl_sync(0xffffffffu, r, src);
      if (admits(ss, rr)) insert(ss, rr, lane);  // the k-th may have risen meanwhile
    }
  }
};

// The best k of a block's rows are all ranked at or above each warp's k-th entry once that
// warp's list is full, so a row below the highest of them (the block's floor) cannot be among
// them, nor among the best k of all rows: warps skip it before it costs an insertion. Ties with
// the floor are offered, so the lists' union keeps every entry the block's best k could hold.
// The floor is a float's bits mapped to an int that orders like the float (atomicMax on ints).
struct BlockFloor {
  int* bits;  // shared memory, initialised by init() before the first barrier

  __device__ static int ordered(float s) {
    const int i = __float_as_int(s);
    return i >= 0 ? i : i ^ 0x7fffffff;
  }
  __device__ void init() const {
    if (threadIdx.x == 0) *bits = ordered(kSentinelSim);
  }
  // The entry to offer: (s, r), or nothing when s is below the floor.
  __device__ bool passes(float s) const { return ordered(s) >= *reinterpret_cast<volatile int*>(bits); }
  // After an offer: a full list's k-th entry raises the floor. Warp-uniform call.
  __device__ void raise(const WarpTopk& top, int lane) const {
    if (lane == 0 && top.last_row != kSentinelRow) atomicMax(bits, ordered(top.last_sim));
  }
};

}  // namespace distancies
