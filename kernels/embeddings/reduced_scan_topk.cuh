// Reduced-precision first pass: the fused scan over a 16-bit copy of the model (half the
// bytes), fp32 accumulation, keeping the best K approximate candidates per warp. The exact
// re-rank then recomputes the K survivors in fp32 and certifies that no row outside them can
// reach the fp32 top k (docs/variants.md gives the bound).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>

#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/list_select.cuh"
#include "kernels/common/warp_merge.cuh"
#include "kernels/common/warp_topk.cuh"
#include "kernels/embeddings/row_dot.cuh"

namespace distancies {

__device__ __forceinline__ float2 to_float2(__half2 h) { return __half22float2(h); }
__device__ __forceinline__ float2 to_float2(__nv_bfloat162 h) { return __bfloat1622float2(h); }

// 8 elements (one 16-byte load) against 8 query floats (qa: the first 4, qb: the last 4).
template <class T2>
__device__ __forceinline__ float fma8(float acc, float4 qa, float4 qb, uint4 raw) {
  const T2* h = reinterpret_cast<const T2*>(&raw);
  const float2 a = to_float2(h[0]), b = to_float2(h[1]), c = to_float2(h[2]), d = to_float2(h[3]);
  acc = fma4(acc, qa, make_float4(a.x, a.y, b.x, b.y));
  return fma4(acc, qb, make_float4(c.x, c.y, d.x, d.y));
}

// A 16-bit row of D <= 384 is at most 48 16-byte loads, so each half-warp takes one row
// (16 lanes x kSegs loads) and a warp works on 2 x kPairs rows at once: fewer idle lanes than a
// whole warp per row (38 of 64 slots busy at D = 300, against 38 of 48). A lane always reads the
// same columns of its rows, so for D <= 16 x 8 x kSegs its query slice is loaded into registers
// once: the loop is then 16-byte loads, conversions and FMAs only (no shared-memory reads),
// which is what brought it from 1.10 to 1.02 x the 16-bit floor. Masked slots multiply zeros.
// kAllKeys: no lists; every row's key goes to cand_s[row] (the large-k path selects from them).
template <class T2, int kWarps, int kPairs, int kSegs, int kMinBlocksPerSm, bool kAllKeys = false>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocksPerSm)
    reduced_scan_topk_kernel(const uint4* vec8, int rld, const float* query, int dim, float query_norm,
                             const float* norms, int rows, int K, float* cand_s, int* cand_r, int* status) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ int floor_bits;
  const BlockFloor floor{&floor_bits};
  floor.init();
  if (blockIdx.x == 0 && threadIdx.x == 0) *status = 0;  // certified until the re-rank says otherwise
  float* qf = reinterpret_cast<float*>(smem);
  const BlockLists lists = carve_block_lists(qf + rld, kWarps, K);
  for (int j = threadIdx.x; j < rld; j += blockDim.x) qf[j] = j < dim ? query[j] : 0.0f;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int half = lane / 16, hl = lane % 16;
  WarpTopk top{lists.s + warp * K, lists.r + warp * K, K};
  if (!kAllKeys) top.clear(lane);
  __syncthreads();
  const float4* q4 = reinterpret_cast<const float4*>(qf);
  const int n8 = rld / 8;
  constexpr int kRound = 16 * kSegs;  // 16-byte column groups per round
  float4 qa[kSegs], qb[kSegs];
  auto load_query = [&](int j0) {
#pragma unroll
    for (int s = 0; s < kSegs; ++s) {
      const int j = j0 + s * 16 + hl;
      qa[s] = j < n8 ? q4[2 * j] : make_float4(0, 0, 0, 0);
      qb[s] = j < n8 ? q4[2 * j + 1] : make_float4(0, 0, 0, 0);
    }
  };
  const bool one_round = n8 <= kRound;
  if (one_round) load_query(0);
  constexpr int kRowsPerWarp = 2 * kPairs;
  const long long gw = static_cast<long long>(blockIdx.x) * kWarps + warp;
  const long long nw = static_cast<long long>(gridDim.x) * kWarps;
  const long long step = nw * kRowsPerWarp;
  // Software pipelining: the next round's (or the next rows') loads are issued before this
  // round's epilogue, so each warp keeps its loads in flight while it reduces and ranks.
  uint4 v[kPairs][kSegs];
  auto load_rows = [&](long long b, int j0) {
#pragma unroll
    for (int p = 0; p < kPairs; ++p)
#pragma unroll
      for (int s = 0; s < kSegs; ++s) {
        const long long row = b + 2 * p + half;
        const int j = j0 + s * 16 + hl;
        v[p][s] = (row < rows && j < n8) ? __ldcs(vec8 + row * n8 + j) : make_uint4(0, 0, 0, 0);
      }
  };
  // Lane r < kRowsPerWarp reads row base + r's norm (one coalesced load) for the epilogue.
  float next_norm = 0.0f;
  auto load_norm = [&](long long b) {
    next_norm = lane < kRowsPerWarp && b + lane < rows ? __ldg(norms + b + lane) : 0.0f;
  };
  long long base = gw * kRowsPerWarp;
  if (base < rows) {
    load_rows(base, 0);
    load_norm(base);
  }
  for (; base < rows; base += step) {
    const float norm = next_norm;
    float acc[kPairs];
#pragma unroll
    for (int p = 0; p < kPairs; ++p) acc[p] = 0.0f;
    for (int j0 = 0; j0 < n8; j0 += kRound) {
      if (!one_round) load_query(j0);
#pragma unroll
      for (int s = 0; s < kSegs; ++s)
#pragma unroll
        for (int p = 0; p < kPairs; ++p) acc[p] = fma8<T2>(acc[p], qa[s], qb[s], v[p][s]);
      if (j0 + kRound < n8) {
        load_rows(base, j0 + kRound);
      } else if (base + step < rows) {
        load_rows(base + step, 0);
        load_norm(base + step);
      }
    }
    // Lane r < kRowsPerWarp takes row base + r's total (from lane 16 (r % 2) of pair r / 2) and
    // already holds its norm: all the warp's similarities in one pass, offered together (a
    // ballot; only rows that beat the list's k-th cost an insertion), not one row at a time.
    float total = 0.0f;
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
#pragma unroll
      for (int off = 8; off > 0; off /= 2) acc[p] += __shfl_xor_sync(0xffffffffu, acc[p], off);  // within halves
      const float t = __shfl_sync(0xffffffffu, acc[p], 16 * (lane % 2));
      if (lane / 2 == p) total = t;
    }
    float sim = kSentinelSim;
    int row = kSentinelRow;
    if (lane < kRowsPerWarp && base + lane < rows) {
      sim = approx_rank_key(cosine_from_dot(total, query_norm, norm));
      row = static_cast<int>(base + lane);
    }
    if constexpr (kAllKeys) {
      if (row != kSentinelRow) cand_s[row] = sim;  // every row's key, for the large-k select
    } else {
      const bool pass = floor.passes(sim);
      top.offer(pass ? sim : kSentinelSim, pass ? row : kSentinelRow, lane);
      floor.raise(top, lane);
    }
  }
  allow_dependents();  // the re-rank may be scheduled now (not earlier: it would hold SM slots)
  if constexpr (!kAllKeys)
    block_select_lists<kWarps>(lists, K, cand_s + static_cast<long long>(blockIdx.x) * K,
                               cand_r + static_cast<long long>(blockIdx.x) * K);
}

// One block. The K approximate candidates (sorted) are recomputed in fp32 exactly as the
// fused fp32 scan would, one warp per row; their ranks among themselves give the best k.
// Certified when the k-th exact similarity beats the last candidate's approximate similarity
// (plus the query's shift, for the centred copies) plus the error bound: then every row left out is provably below it
// (`certifies`, which also refuses an exact NaN among the candidates; a NaN is never placed in the list). Otherwise
// *status = 1 and the caller falls back.
template <int kWarps>
__device__ void exact_rerank_block(const DotArgs& a, const float* approx_s, const int* approx_r, int K, int k,
                                   float error_bound, float* out_s, int* out_r, int* status, unsigned char* smem,
                                   float shift = 0.0f, float* trace = nullptr) {
  const int ld4 = a.ld / 4;
  float4* q4 = reinterpret_cast<float4*>(smem);
  float* exact_s = reinterpret_cast<float*>(q4 + ld4);
  int* exact_r = reinterpret_cast<int*>(exact_s + K);
  float* list_s = reinterpret_cast<float*>(exact_r + K);
  int* list_r = reinterpret_cast<int*>(list_s + k);
  __shared__ int exact_nan;
  float* qf = reinterpret_cast<float*>(q4);
  stage_query(a, qf);
  if (threadIdx.x == 0) exact_nan = 0;
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int c = warp; c < K; c += kWarps) {
    const int row = approx_r[c];
    float s = kSentinelSim;
    if (row != kSentinelRow) s = row_similarity(a, q4, row, lane);
    if (lane == 0) {
      exact_s[c] = s;
      exact_r[c] = row;
      if (s != s) exact_nan = 1;
    }
  }
  fill_sentinels(SplitEntries{list_s, list_r}, k, threadIdx.x, blockDim.x);
  __syncthreads();
  // Each candidate's place is the number ranked before it (the rows are distinct); an exact NaN
  // is never placed (place_by_rank skips it) and fails the certificate below.
  place_by_rank(SplitEntries{exact_s, exact_r}, K, SplitEntries{list_s, list_r}, k, threadIdx.x, blockDim.x);
  __syncthreads();
  if (warp != 0) return;
  for (int i = lane; i < k; i += 32) {
    out_s[i] = list_s[i];
    out_r[i] = list_r[i];
  }
  // Fewer rows than K: every row was a candidate, nothing was left out.
  const bool all_rows_seen = approx_r[K - 1] == kSentinelRow;
  // Keys of the centred rows (shift != 0) are the similarity less the query's shift: add it back,
  // rounded up (the bound holds centre_slack for the shift's own rounding).
  const float last = shift == 0.0f ? approx_s[K - 1] : __fadd_ru(approx_s[K - 1], shift);
  const bool certified = certifies(list_s[k - 1], last, error_bound, all_rows_seen, exact_nan != 0);
  if (lane == 0 && !certified) *status = 1;
  if (lane == 0 && trace) {  // the certificate's operands, for diagnostics (BatchSearcher's trace)
    trace[0] = list_s[k - 1];
    trace[1] = last;
    trace[2] = error_bound;
    trace[3] = all_rows_seen ? 1.0f : 0.0f;
  }
}

// Shared memory exact_rerank_block needs.
__host__ __device__ constexpr std::size_t exact_rerank_smem(int ld, int K, int k) {
  return ld * sizeof(float) + (K + k) * (sizeof(float) + sizeof(int));
}

// One block: the best K of the scan blocks' lists (select_from_lists_block), then their exact
// re-rank, in one launch.
template <int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    select_rerank_kernel(DotArgs a, const float* lists_s, const int* lists_r, int chunks, int K, int k,
                         float error_bound, float* out_s, int* out_r, int* status, float shift) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ float approx_s[WarpTopk::kMaxK];
  __shared__ int approx_r[WarpTopk::kMaxK];
  wait_for_prerequisites();  // launched as a dependent of the scan (its lists)
  allow_dependents();
  select_from_lists_block<kWarps * 32, BoundBy::kHeadRanks>(lists_s, lists_r, chunks, K, approx_s, approx_r);
  __syncthreads();
  exact_rerank_block<kWarps>(a, approx_s, approx_r, K, k, error_bound, out_s, out_r, status, smem, shift);
}

}  // namespace distancies
