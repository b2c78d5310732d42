// The int8 walk's candidate buffers (wgmma_filter_i8.cuh) come in segments, one a block part:
// the select gathers them into shared memory (one pass, every load independent) and selects as
// for one buffer a query.
#pragma once
#include "kernels/embeddings/mma_filter_scan.cuh"
#include "kernels/embeddings/tiled_i8.cuh"

namespace distancies {

// One block a query: part p's seg_counts[p] candidates at cand[p seg ...] (at most seg kept),
// staged into dynamic shared memory (select_smem(capacity)), then select_staged (their rows are
// the copy's sorted rows: order[] maps the K chosen to the model's). A segment that
// overflowed, or more candidates than shared memory holds: status = 1 (the fallback answers; the
// list still holds real rows only).
// `whole` (not null): where the query appended more than K and every one is staged, they go back
// to the start of its buffer with the model's rows, whole[b] their count (else ~0u), as the wide
// re-rank reads a buffer (kernels/embeddings/wide_rerank.cuh).
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    select_segments_kernel(unsigned long long* cand, long long capacity, const unsigned* seg_counts, int parts,
                           long long seg, int K, SliceLists out, int* status, const int* order, unsigned* whole) {
  extern __shared__ unsigned long long staged_keys[];
  __shared__ long long offset[tiled_i8::kMaxSegments + 1];
  __shared__ bool complete;
  const unsigned* counts = seg_counts + static_cast<long long>(blockIdx.x) * tiled_i8::kMaxSegments;
  if (threadIdx.x == 0) {
    long long at = 0;
    bool over = false;
    for (int p = 0; p < parts; ++p) {
      offset[p] = at;
      const long long n = counts[p];
      over |= n > seg;
      at += n < seg ? n : seg;
    }
    offset[parts] = at;
    complete = !over && at <= filter_scan::kSmemKeys;
    if (!complete) status[blockIdx.x] = 1;
  }
  __syncthreads();
  const long long n = min(offset[parts], filter_scan::kSmemKeys);
  unsigned long long* base = cand + static_cast<long long>(blockIdx.x) * capacity;
  for (long long i = threadIdx.x; i < n; i += kThreads) {
    int lo = 0, hi = parts;  // the part whose entries hold i: offset[lo] <= i < offset[lo + 1]
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      if (offset[mid] <= i)
        lo = mid;
      else
        hi = mid;
    }
    staged_keys[i] = base[lo * seg + (i - offset[lo])];
  }
  __syncthreads();
  if (whole) {  // every read of the buffer is above the barrier
    const bool kept = complete && n > K;
    for (long long i = threadIdx.x; kept && i < n; i += kThreads) {
      const unsigned long long v = staged_keys[i];
      base[i] = filter_scan::candidate_key(static_cast<unsigned>(v >> 32), order[filter_scan::candidate_row(v)]);
    }
    if (threadIdx.x == 0) whole[blockIdx.x] = kept ? static_cast<unsigned>(n) : ~0u;
  }
  select_staged<kThreads>(staged_keys, n, K, out, status + blockIdx.x, order);
}

}  // namespace distancies
