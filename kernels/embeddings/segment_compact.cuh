// The int8 walk's candidate buffers (wgmma_filter_i8.cuh) come in segments, one a block part:
// packed here before the select reads them as one buffer a query.
#pragma once
#include "kernels/embeddings/tiled_i8.cuh"

namespace distancies {

// One block a query: its buffer's segments (block part p's candidates at p seg, seg_counts[p] of
// them) packed to the front, and the total left in totals[query] (capacity + 1 where a segment
// overflowed: the select then sends the query to the fallback). Chunks of kThreads are read
// whole before any is written: a segment moves towards the front, over its own earlier entries.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    compact_segments_kernel(unsigned long long* cand, long long capacity, const unsigned* seg_counts, int parts,
                            long long seg, unsigned* totals) {
  __shared__ long long offset[tiled_i8::kMaxSegments + 1];
  __shared__ int overflow;
  const unsigned* counts = seg_counts + static_cast<long long>(blockIdx.x) * tiled_i8::kMaxSegments;
  if (threadIdx.x == 0) {
    long long at = 0;
    int over = 0;
    for (int p = 0; p < parts; ++p) {
      offset[p] = at;
      const long long n = counts[p];
      over |= n > seg;
      at += n < seg ? n : seg;
    }
    offset[parts] = at;
    overflow = over;
  }
  __syncthreads();
  unsigned long long* base = cand + static_cast<long long>(blockIdx.x) * capacity;
  for (int p = 1; p < parts; ++p) {
    const long long n = offset[p + 1] - offset[p], from = p * seg, to = offset[p];
    if (to == from) continue;
    for (long long i0 = 0; i0 < n; i0 += kThreads) {
      const long long i = i0 + threadIdx.x;
      const unsigned long long v = i < n ? base[from + i] : 0ull;
      __syncthreads();
      if (i < n) base[to + i] = v;
      __syncthreads();
    }
  }
  if (threadIdx.x == 0) totals[blockIdx.x] = static_cast<unsigned>(overflow ? capacity + 1 : offset[parts]);
}

}  // namespace distancies
