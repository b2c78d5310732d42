// A warp's running top k, kept sorted (best first) in shared memory. Candidates arrive as
// warp-uniform values; only one that beats the current k-th entry costs an insertion, which
// after the first few thousand rows is rare (about k * ln(rows / k) times per warp).
#pragma once
#include "kernels/dot_args.cuh"

namespace distancies {

struct WarpTopk {
  float* sims;  // k entries in shared memory
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

  // Warp-uniform call: lane 0 shifts the tail down and places the entry.
  __device__ void insert(float s, int r, int lane) {
    if (lane == 0) {
      int j = k - 1;
      while (j > 0 && ranks_before(s, r, sims[j - 1], rows[j - 1])) {
        sims[j] = sims[j - 1];
        rows[j] = rows[j - 1];
        --j;
      }
      sims[j] = s;
      rows[j] = r;
    }
    __syncwarp();
    last_sim = sims[k - 1];
    last_row = rows[k - 1];
    __syncwarp();  // every lane has read before lane 0 may write again
  }

  // Merges a sorted list of k: stops at the first entry that cannot enter.
  __device__ void merge_sorted(const float* s, const int* r, int lane) {
    for (int i = 0; i < k; ++i) {
      const float si = s[i];
      const int ri = r[i];
      if (!admits(si, ri)) break;
      insert(si, ri, lane);
    }
  }
};

}  // namespace distancies
