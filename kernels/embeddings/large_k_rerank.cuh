// The large-k re-rank of a reduced-copy pipeline (docs/variants.md, "Large k"): the K rows with
// the best approximate keys (a radix select over every row's key) are recomputed in fp32 exactly
// as the fused scan would, one warp a row over many blocks; their ranks among themselves give the
// best k; the certificate then compares the k-th exact similarity with the K-th key plus the
// bound, as exact_rerank_block does for the lists.
#pragma once
#include "kernels/common/rank_place.cuh"
#include "kernels/common/ranking.hpp"
#include "kernels/embeddings/dot_args.cuh"
#include "kernels/embeddings/radix_select.cuh"
#include "kernels/embeddings/row_dot.cuh"

namespace distancies {

// out_s[c] = the fp32 similarity of row rows[c] (fused's arithmetic: row_dot_f32 against the
// query in shared memory); an exact NaN sets *status (never certified).
template <int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    exact_similarities_kernel(DotArgs a, const int* rows, int K, float* out_s, int* out_r, int* status) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* qf = reinterpret_cast<float*>(smem);
  stage_query(a, qf);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const auto* q4 = reinterpret_cast<const float4*>(qf);
  for (int c = blockIdx.x * kWarps + warp; c < K; c += gridDim.x * kWarps) {
    const int row = rows[c];
    float s = kSentinelSim;
    if (row != kSentinelRow) s = row_similarity(a, q4, row, lane);
    if (lane == 0) {
      out_s[c] = s;
      out_r[c] = row;
      if (s != s) *status = 1;
    }
  }
}

// The certificate of a large-k re-rank (docs/variants.md, "Large k"): the k-th exact similarity
// must beat the K-th key (`threshold`, the radix select's) plus the bound; every row was a
// candidate when K covered the model. No status pointer: no certificate.
struct LargeKCertificate {
  const RadixState* threshold = nullptr;
  float error_bound = 0.0f;
  float shift = 0.0f;  // keys of the centred copy: the query's shift is added back (rounded up)
  bool all_rows_seen = false;
  int kk = 0;  // the k placed: min(k, rows)
  int* status = nullptr;
};

// The best k of m entries (distinct rows) by rank: every block stages all m in shared memory,
// kGroup threads rank one; places past the real entries are sentinels; a NaN is never placed.
// The thread placing the k-th entry checks the certificate (a NaN among the entries has already
// failed it: exact_similarities_kernel).
template <int kThreads, int kGroup>
__global__ void __launch_bounds__(kThreads) rank_place_kernel(const float* in_s, const int* in_r, int m, int k,
                                                              float* out_s, int* out_r, LargeKCertificate cert) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int skipped;
  ScoredRow* e = reinterpret_cast<ScoredRow*>(smem);
  if (threadIdx.x == 0) skipped = 0;
  __syncthreads();
  int mine = 0;
  for (int i = threadIdx.x; i < m; i += kThreads) {
    e[i] = ScoredRow{in_s[i], in_r[i]};
    mine += unplaceable(e[i]);
  }
  if (mine) atomicAdd(&skipped, mine);
  __syncthreads();
  const long long t = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  const int place = place_staged_by_rank<kGroup>(e, m, skipped, k, t, out_s, out_r);
  if (cert.status && place >= 0 && place == cert.kk - 1) {
    const float kth = e[t / kGroup].s;
    const float key = from_radix_key(cert.threshold->prefix);
    if (!certifies(kth, cert.shift == 0.0f ? key : __fadd_ru(key, cert.shift), cert.error_bound, cert.all_rows_seen,
                   false))
      *cert.status = 1;
  }
}

}  // namespace distancies
