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

constexpr int kNaN = 2;       // status of a query with an exact NaN among its candidates: never certified
constexpr int kWidened = -1;  // status of a query this re-rank certified (the searcher counts them)

}  // namespace wide_rerank

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
