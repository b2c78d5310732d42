// Radix select: the k-th largest similarity found digit by digit (8 bits a pass, most
// significant first) from histograms of the candidates still matching the digits fixed so
// far; then every row at or above it is compacted and a one-block warp-select orders them.
#pragma once
#include "kernels/common/warp_merge.cuh"
#include "kernels/common/warp_topk.cuh"

namespace distancies {

// Order-preserving key: larger float, larger unsigned (-0 folded into +0: they rank equal).
__device__ __forceinline__ unsigned radix_key(float s) {
  const unsigned u = s == 0.0f ? 0u : __float_as_uint(s);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

struct RadixState {
  unsigned prefix;     // digits fixed so far
  unsigned mask;       // which bits of the prefix are fixed
  int remaining;       // how many of the k are still to be found at or below the prefix
  unsigned hist[256];
};

// Histogram of the next digit among keys matching the prefix (shared-memory then global).
// Defined in kernels/radix_select.cu, as is radix_choose_kernel.
__global__ void radix_histogram_kernel(const float* sims, int n, int shift, RadixState* st);

// One thread: the digit holding the remaining-th largest key; clears the histogram.
__global__ void radix_choose_kernel(int shift, RadixState* st);

// Rows whose key reaches the k-th largest (CUB DeviceSelect's predicate).
struct AtLeastThreshold {
  const float* sims;
  const RadixState* st;
  __device__ bool operator()(int i) const { return radix_key(sims[i]) >= st->prefix; }
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
