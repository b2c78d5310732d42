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

  // Every lane offers one entry; those that beat the k-th go in one by one (a ballot finds
  // them; past the first rounds there are almost none). Warp-uniform call.
  __device__ void offer(float s, int r, int lane) {
    unsigned want = __ballot_sync(0xffffffffu, admits(s, r));
    while (want) {
      const int src = __ffs(want) - 1;
      want &= want - 1;
      const float ss = __shfl_sync(0xffffffffu, s, src);
      const int rr = __shfl_sync(0xffffffffu, r, src);
      if (admits(ss, rr)) insert(ss, rr, lane);  // the k-th may have risen meanwhile
    }
  }
};

}  // namespace distancies
