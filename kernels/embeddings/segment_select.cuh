// The int8 walk's candidate buffers (wgmma_filter_i8.cuh) come in segments, one a block part:
// the select gathers them into shared memory (one pass, every load independent) and selects as
// for one buffer a query.
#pragma once
#include <cub/block/block_scan.cuh>

#include "kernels/embeddings/mma_filter_scan.cuh"
#include "kernels/embeddings/tiled_i8.cuh"

namespace distancies {

// Where part p's segment (at most seg kept) starts among a query's gathered candidates:
// offset[p], offset[parts] all of them, in shared memory. Returns whether a segment overflowed.
// Every thread of the block, one count each and a block scan (a loop over the parts on one
// thread waited on its loads one after another: a sizeable share of a small batch's select).
// Ends on a block barrier, after which offset[] is complete.
template <int kThreads>
__device__ bool segment_offsets(const unsigned* counts, int parts, long long seg, long long* offset) {
  static_assert(kThreads >= tiled_i8::kMaxSegments, "a count a thread");
  using Scan = cub::BlockScan<long long, kThreads>;
  __shared__ typename Scan::TempStorage scan;
  const int t = threadIdx.x;
  long long kept = 0;
  bool over = false;
  if (t < parts) {
    const long long n = counts[t];
    over = n > seg;
    kept = n < seg ? n : seg;
  }
  long long at = 0, all = 0;
  Scan(scan).ExclusiveSum(kept, at, all);
  if (t < parts) offset[t] = at;
  if (t == 0) offset[parts] = all;
  return __syncthreads_or(over) != 0;
}

// Gathered candidate i's place in its segment of `base`: the part whose entries hold it
// (offset[lo] <= i < offset[lo + 1]) by a binary search.
__device__ inline long long segment_entry(const long long* offset, int parts, long long seg, long long i) {
  int lo = 0, hi = parts;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (offset[mid] <= i)
      lo = mid;
    else
      hi = mid;
  }
  return lo * seg + (i - offset[lo]);
}

// The int8 walk in two passes (filter_scan.cu): after the first, one block a query gives each
// candidate it appended (gathered as select_segments_kernel does, at most kSmemKeys) a lower bound
// of its fp32 similarity (tiled_i8::lower_from_upper, from its upper key and its tile), and raises
// the query's threshold, where there are k, to a k-th best that k distinct rows reach: where `e`
// has the model's rows, the k-th exact similarity of the rows of the best kExactSeedRows lower
// bounds, recomputed in fp32 (exact_kth_key; at least the k-th lower bound, each row's exact
// similarity being above its own), else the k-th lower bound. Kept as the fp16 passes keep theirs,
// less x.seed_bound (the walk adds it back, rounded down). Dynamic shared memory:
// exact_seed_smem(capacity, e.exact.ld).
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    reseed_from_segments_kernel(const unsigned long long* cand, long long capacity, int parts, int k, I8FilterArgs x,
                                filter_scan::ExactSeed e, unsigned* thresholds) {
  extern __shared__ __align__(16) unsigned long long staged_keys[];
  __shared__ long long offset[tiled_i8::kMaxSegments + 1];
  segment_offsets<kThreads>(x.seg_counts + static_cast<long long>(blockIdx.x) * tiled_i8::kMaxSegments, parts, x.seg,
                            offset);
  const long long n = min(offset[parts], filter_scan::kSmemKeys);
  if (n < k) return;  // the whole block
  const unsigned long long* base = cand + static_cast<long long>(blockIdx.x) * capacity;
  const float4 q = x.queries[blockIdx.x];
  for (long long i = threadIdx.x; i < n; i += kThreads) {
    const unsigned long long v = base[segment_entry(offset, parts, x.seg, i)];
    const int row = filter_scan::candidate_row(v);
    const float lower =
        tiled_i8::lower_from_upper(filter_scan::candidate_sim(v), q, x.tiles[row / tiled_i8::kTileRows], x.fp32_bound);
    staged_keys[i] = filter_scan::candidate_key(filter_scan::float_key(lower), row);
  }
  __syncthreads();
  const float kth =
      filter_scan::seed_kth<kThreads>(staged_keys, n, k, e, reinterpret_cast<unsigned char*>(staged_keys), capacity);
  if (threadIdx.x == 0 && kth > -__builtin_huge_valf()) {
    const float t = __fsub_rd(kth, x.seed_bound);
    if (t == t) thresholds[blockIdx.x] = max(thresholds[blockIdx.x], ordered_bits(t));
  }
}

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
  const bool over = segment_offsets<kThreads>(counts, parts, seg, offset);
  if (threadIdx.x == 0) {
    complete = !over && offset[parts] <= filter_scan::kSmemKeys;
    if (!complete) status[blockIdx.x] = 1;
  }
  __syncthreads();
  const long long n = min(offset[parts], filter_scan::kSmemKeys);
  unsigned long long* base = cand + static_cast<long long>(blockIdx.x) * capacity;
  for (long long i = threadIdx.x; i < n; i += kThreads) staged_keys[i] = base[segment_entry(offset, parts, seg, i)];
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
