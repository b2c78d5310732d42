// The wide re-rank of the filtered scans (docs/batch.md, "The wide re-rank"). A query whose best K
// candidates do not certify its top k (their keys are too close to call) is answered from every
// candidate it appended, where its buffer holds them all: the scan appends every row whose key
// reaches the query's threshold, a lower bound on its k-th best fp32 similarity less the key's
// error, so a row left out scores below the k-th best and the exact top k of the candidates is the
// model's. A few thousand rows read in fp32 instead of another pass over the model.
#pragma once
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/ranking.hpp"
#include "kernels/embeddings/dot_args.cuh"
#include "kernels/embeddings/mma_filter_scan.cuh"
#include "kernels/embeddings/row_dot.cuh"

namespace distancies {

namespace wide_rerank {

// Query b is widened where the re-rank left it uncertified (status 1: not the fallback's other
// reasons, which the select marks with a count past max_n) and its buffer holds every candidate.
__device__ __forceinline__ bool wanted(const int* status, const unsigned* counts, int b, unsigned max_n) {
  return status[b] == 1 && counts[b] <= max_n;
}

// An exact similarity and its row as one key whose order is ranks_before's: -0 counts as +0, and
// of equal similarities the lower row is the larger key.
__device__ __forceinline__ unsigned long long exact_key(float s, int row) {
  return filter_scan::candidate_key(filter_scan::float_key(s), row);
}

constexpr int kNaN = 2;            // status of a query with an exact NaN among its candidates: never certified
constexpr int kWidened = -1;       // status of a query this re-rank certified (the searcher counts them)
constexpr int kWidenedFirst = -2;  // the same, by its first stage (wide_first_kernel)
// The candidates a query's first stage re-ranks where it has more: its certificate then needs the
// best key of the rest below the k-th exact similarity, which holds for most queries at a fraction
// of the reads of every candidate (thousands a query on strongly anisotropic data).
constexpr int kFirst = 256;
// The candidates from which a query goes to the first stage: with fewer, the second stage (a few
// blocks a query, every candidate at once) answers it sooner than one block can recompute and
// select kFirst of them (the measurements in docs/batch.md, "Seeds from exact similarities").
constexpr unsigned kFirstFrom = 2048;

}  // namespace wide_rerank

// The first stage, before wide_exact_kernel and wide_select_kernel (which answer the queries it
// leaves from every candidate). The blocks take the queries to widen with more than kFirstFrom
// candidates in turn (a block an SM: most queries need nothing); a query's keys are staged in
// dynamic shared memory (select_smem(max_n), then its query: ld floats from float offset
// first_query_offset(max_n)), its best kFirst recomputed as wide_exact_kernel does, and where
// the k-th of them beats the best key of the rest plus `bound` (the scan's; `shifts` not null:
// keys of the centred rows, the query's shift added back rounded up), their best k are its
// answer, status kWidenedFirst. An exact NaN or a key twice leaves the query as it was.
namespace wide_rerank {
__host__ __device__ constexpr long long first_query_offset(unsigned max_n) {
  return 2 * ((static_cast<long long>(max_n < filter_scan::kSmemKeys ? max_n : filter_scan::kSmemKeys) + 1) / 2);
}
}  // namespace wide_rerank

template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    wide_first_kernel(DotArgs model, const float* queries, const float* query_norms, const unsigned long long* cand,
                      long long capacity, const unsigned* counts, unsigned max_n, int batch, int k, float bound,
                      const float* shifts, float* out_s, int* out_r, int* status) {
  wait_for_prerequisites();  // a dependent launch: the re-rank's statuses first
  constexpr int M = wide_rerank::kFirst, kWarps = kThreads / 32;
  extern __shared__ __align__(16) unsigned long long staged_keys[];
  float* qf = reinterpret_cast<float*>(staged_keys) + 2 * wide_rerank::first_query_offset(max_n);
  const auto* q4 = reinterpret_cast<const float4*>(qf);
  __shared__ unsigned long long best[M];
  __shared__ int above, placed, exact_nan;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int b = blockIdx.x; b < batch; b += gridDim.x) {
    // Every condition below is the same for every thread (words no other block writes for query
    // b, or shared ones read after a barrier): the block goes on or on to the next query as one.
    if (!wide_rerank::wanted(status, counts, b, max_n) || counts[b] <= wide_rerank::kFirstFrom) continue;
    __syncthreads();  // the previous query's shared arrays are read
    const long long n = counts[b];
    const unsigned long long* keys = filter_scan::stage_keys<kThreads>(cand + static_cast<long long>(b) * capacity, n);
    const unsigned long long rest = filter_scan::kth_largest<kThreads>(keys, n, M + 1, 0);
    DotArgs a = model;
    a.query = queries + static_cast<long long>(b) * model.dim;
    a.query_norm = query_norms[b];
    stage_query(a, qf);
    if (threadIdx.x == 0) above = 0, placed = 0, exact_nan = 0;
    __syncthreads();
    for (long long i = threadIdx.x; i < n; i += kThreads)
      if (keys[i] > rest) {
        const int at = atomicAdd(&above, 1);
        if (at < M) best[at] = keys[i];
      }
    __syncthreads();
    if (above != M) continue;  // a key twice
    for (int c = warp; c < M; c += kWarps) {
      const int row = filter_scan::candidate_row(best[c]);
      const float s = row_similarity(a, q4, row, lane);
      if (lane == 0) {
        best[c] = wide_rerank::exact_key(s, row);
        if (s != s) exact_nan = 1;
      }
    }
    __syncthreads();
    if (exact_nan) continue;
    const unsigned long long kth = filter_scan::kth_largest<kThreads>(best, M, k, 0);
    const float rest_key = filter_scan::candidate_sim(rest);
    const float last = shifts ? __fadd_ru(rest_key, shifts[b]) : rest_key;
    if (!certifies(filter_scan::candidate_sim(kth), last, bound, false, false)) continue;
    for (int e = threadIdx.x; e < M; e += kThreads)
      if (best[e] >= kth) atomicAdd(&placed, 1);
    __syncthreads();
    if (placed != k) continue;  // a row twice
    for (int e = threadIdx.x; e < M; e += kThreads) {
      if (best[e] < kth) continue;
      int rank = 0;
      for (int j = 0; j < M; ++j) rank += best[j] > best[e];
      out_s[static_cast<long long>(b) * k + rank] = filter_scan::candidate_sim(best[e]);
      out_r[static_cast<long long>(b) * k + rank] = filter_scan::candidate_row(best[e]);
    }
    if (threadIdx.x == 0) status[b] = wide_rerank::kWidenedFirst;
  }
}

// Blocks (p, b): query b's counts[b] candidates shared by the gridDim.x blocks p, a warp a row as
// the fused scan computes it (the query in shared memory; dynamic shared memory ld floats), each
// entry replaced by its exact key.
template <int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    wide_exact_kernel(DotArgs model, const float* queries, const float* query_norms, unsigned long long* cand,
                      long long capacity, const unsigned* counts, unsigned max_n, int* status) {
  wait_for_prerequisites();  // a dependent launch: the re-rank's statuses first
  const int b = blockIdx.y;
  if (!wide_rerank::wanted(status, counts, b, max_n)) return;
  extern __shared__ __align__(16) unsigned char smem[];
  float* qf = reinterpret_cast<float*>(smem);
  DotArgs a = model;
  a.query = queries + static_cast<long long>(b) * model.dim;
  a.query_norm = query_norms[b];
  stage_query(a, qf);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const auto* q4 = reinterpret_cast<const float4*>(qf);
  unsigned long long* mine = cand + static_cast<long long>(b) * capacity;
  const long long n = counts[b];
  for (long long c = static_cast<long long>(blockIdx.x) * kWarps + warp; c < n; c += gridDim.x * kWarps) {
    const int row = filter_scan::candidate_row(mine[c]);
    const float s = row_similarity(a, q4, row, lane);
    if (lane == 0) {
      mine[c] = wide_rerank::exact_key(s, row);
      if (s != s) status[b] = wide_rerank::kNaN;
    }
  }
}

// One block a query: the best k of its exact keys (staged in dynamic shared memory,
// select_smem(max_n), and chosen as the filtered scans choose their K) as its answer, status
// kWidened. A query with fewer than k keys, or a row twice (more than k keys reach the k-th), keeps
// its status: the fallback answers it.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    wide_select_kernel(const unsigned long long* cand, long long capacity, const unsigned* counts, unsigned max_n,
                       int k, float* out_s, int* out_r, int* status) {
  wait_for_prerequisites();  // a dependent launch: the exact keys first
  const int b = blockIdx.x;
  if (!wide_rerank::wanted(status, counts, b, max_n) || counts[b] < static_cast<unsigned>(k)) return;
  __shared__ int repeated;
  if (threadIdx.x == 0) repeated = 0;
  const long long n = counts[b];
  const unsigned long long* keys = filter_scan::stage_keys<kThreads>(cand + static_cast<long long>(b) * capacity, n);
  select_staged<kThreads>(keys, n, k, SliceLists{out_s, out_r, 1, k}, &repeated);
  __syncthreads();
  if (threadIdx.x == 0 && repeated == 0) status[b] = wide_rerank::kWidened;
}

}  // namespace distancies
