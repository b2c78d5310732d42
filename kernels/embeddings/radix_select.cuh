// Radix select: the k-th largest similarity found digit by digit (8 bits a pass, most
// significant first) from histograms of the candidates still matching the digits fixed so
// far; then every row at or above it is compacted and a one-block warp-select orders them.
#pragma once
#include <cstring>

#include "kernels/common/warp_merge.cuh"
#include "kernels/common/warp_topk.cuh"

namespace distancies {

// Order-preserving key: larger float, larger unsigned (-0 folded into +0: they rank equal). A
// NaN gets 0, below every number: like ranks_before, which never ranks a NaN first.
__device__ __forceinline__ unsigned radix_key(float s) {
  if (s != s) return 0u;
  const unsigned u = s == 0.0f ? 0u : __float_as_uint(s);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

struct RadixState {
  unsigned prefix;       // digits fixed so far
  unsigned mask;         // which bits of the prefix are fixed
  int remaining;         // how many of the k are still to be found at or below the prefix
  unsigned blocks_done;  // the histogram's blocks that have added theirs (the last one chooses)
  unsigned hist[256];
};

// The state starts all zero (a memset, no host copy); the first pass's choice starts from
// `wanted`, the k sought (at most the rows). Histogram of the next digit among keys matching the prefix (shared-memory
// then global); the last block to finish then fixes the digit holding the remaining-th largest key and clears the
// histogram for the next pass. Defined in kernels/embeddings/radix_select.cu.
__global__ void radix_histogram_kernel(const float* sims, int n, int shift, int wanted, RadixState* st);

// The chosen rows once the threshold is fixed, in no particular order: every row whose key is
// above it to out[0 .. wanted - remaining), and, with take_ties, the first `remaining` rows at
// it to arrive (any of the ties: the reduced copies' re-rank needs the best K keys, not which
// of equal keys; the fused path takes its ties in row order with CUB instead). counts[0], [1]:
// rows above and at the threshold (zeroed before). keys 16-byte aligned.
__global__ void compact_chosen_kernel(const float* keys, int n, const RadixState* st, int wanted, bool take_ties,
                                      int* counts, int* out);

// The float whose radix_key is `key` (the threshold back as a similarity; key 0, a NaN's, is NaN).
__host__ __device__ inline float from_radix_key(unsigned key) {
  const unsigned u = (key & 0x80000000u) ? (key & 0x7FFFFFFFu) : ~key;
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// Rows whose key reaches the k-th largest (CUB DeviceSelect's predicate).
struct AtLeastThreshold {
  const float* sims;
  const RadixState* st;
  __device__ bool operator()(int i) const { return radix_key(sims[i]) >= st->prefix; }
};

// Rows at the k-th largest key (the ties, of which the first `remaining` in row order complete
// the k; the rows above it are gathered by compact_chosen_kernel).
struct AtThreshold {
  const float* sims;
  const RadixState* st;
  __device__ bool operator()(int i) const { return radix_key(sims[i]) == st->prefix; }
};

// One block orders the selected rows (usually about k of them) into the final top k.
template <int kWarps>
__global__ void __launch_bounds__(kWarps * 32) select_topk_kernel(const float* sims, const int* idx, const int* chosen,
                                                                  const int* count, int k, float* out_s, int* out_r) {
  extern __shared__ __align__(16) unsigned char smem[];
  const BlockLists lists = carve_block_lists(smem, kWarps, k);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  WarpTopk top{lists.s + warp * k, lists.r + warp * k, k};
  top.clear(lane);
  const int m = *count;
  for (int base = warp * 32; base < m; base += kWarps * 32) {
    const int i = base + lane;
    top.offer(i < m ? sims[chosen[i]] : kSentinelSim, i < m ? idx[chosen[i]] : kSentinelRow, lane);
  }
  block_select_lists<kWarps>(lists, k, out_s, out_r);
}

}  // namespace distancies
