// Batched search, device side. The tensor cores (cuBLAS) score a tile of model rows against
// every query of the batch; these kernels prepare the queries, keep each query's best K
// approximate candidates across tiles, and finish with the exact fp32 re-rank of the K.
// The B x rows score matrix never exists whole: only one or two tiles of it at a time.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/common/launch.hpp"
#include "kernels/common/list_select.cuh"
#include "kernels/common/warp_topk.cuh"
#include "kernels/embeddings/reduced_scan_topk.cuh"

namespace distancies {

__device__ __forceinline__ void store_as(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_as(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void store_as(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// One block per query: q / |q| in the GEMM's input type, zero-padded to `ldg`, so the tile
// products are cosines up to the row's 1 / |x|. (Queries arrive packed, B x dim.)
template <class T>
__global__ void normalize_queries_kernel(const float* queries, const float* norms, int dim, int ldg, T* out) {
  const int b = blockIdx.x;
  const float inv = 1.0f / norms[b];
  for (int j = threadIdx.x; j < ldg; j += blockDim.x)
    store_as(out + static_cast<long long>(b) * ldg + j,
             j < dim ? queries[static_cast<long long>(b) * dim + j] * inv : 0.0f);
}

// 1 / |x| per row; a zero row scores 0, as cosine_from_dot says. (kernels/embeddings/batch_select.cu)
__global__ void inverse_norms_kernel(const float* norms, long long rows, float* inv);

// Where the per-(query, slice) candidate lists live: B * slices lists of K, in global memory
// between tiles (a launch cannot keep them in shared memory).
struct SliceLists {
  float* s;
  int* r;
  int slices;
  int K;
};

// Clears every list to sentinels before the first tile. (kernels/embeddings/batch_select.cu)
__global__ void clear_lists_kernel(SliceLists l, long long entries);

__device__ __forceinline__ void unpack(const uint4& raw, const float4* inv, float* out, float) {
  const float* v = reinterpret_cast<const float*>(&raw);
  const float4 w = inv[0];
  out[0] = v[0] * w.x, out[1] = v[1] * w.y, out[2] = v[2] * w.z, out[3] = v[3] * w.w;
}
__device__ __forceinline__ void unpack(const uint4& raw, const float4* inv, float* out, __half) {
  const __half2* h = reinterpret_cast<const __half2*>(&raw);
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const float4 w = inv[i];
    const float2 a = __half22float2(h[2 * i]), b = __half22float2(h[2 * i + 1]);
    out[4 * i] = a.x * w.x, out[4 * i + 1] = a.y * w.y, out[4 * i + 2] = b.x * w.z, out[4 * i + 3] = b.y * w.w;
  }
}
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

// One warp per (query, slice): reads its slice of the query's tile scores (16-byte loads of
// T = float or __half), turns them into approximate cosines and offers them to the list it
// carried over from the previous tile. Scores are B rows of `ldc` (ldc and row0 multiples of 8).
template <int kWarps, class T>
__global__ void __launch_bounds__(kWarps * 32) tile_select_kernel(const T* scores, int ldc, int tile_rows, int row0,
                                                                  const float* inv_norms, int batch, SliceLists l) {
  constexpr int kPer = 16 / sizeof(T);  // scores per lane per load
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long g = static_cast<long long>(blockIdx.x) * kWarps + warp;
  if (g >= static_cast<long long>(batch) * l.slices) return;  // whole warps leave; no block barrier below
  float* gs = l.s + g * l.K;
  int* gr = l.r + g * l.K;
  WarpTopk top{reinterpret_cast<float*>(smem) + warp * l.K,
               reinterpret_cast<int*>(smem + kWarps * l.K * sizeof(float)) + warp * l.K, l.K};
  for (int i = lane; i < l.K; i += 32) {
    top.sims[i] = gs[i];
    top.rows[i] = gr[i];
  }
  __syncwarp();
  top.last_sim = top.sims[l.K - 1];
  top.last_row = top.rows[l.K - 1];
  const int b = static_cast<int>(g / l.slices), slice = static_cast<int>(g % l.slices);
  const int span = round_up(ceil_div(tile_rows, l.slices), 8);
  const int c0 = slice * span;
  const int c1 = min(tile_rows, c0 + span);
  const T* row = scores + static_cast<long long>(b) * ldc;
  for (int base = c0; base < c1; base += 32 * kPer) {
    const int c = base + kPer * lane;
    float sim[kPer];
    if (c + kPer <= c1) {
      unpack(*reinterpret_cast<const uint4*>(row + c), reinterpret_cast<const float4*>(inv_norms + row0 + c), sim, T{});
    } else {
#pragma unroll
      for (int i = 0; i < kPer; ++i) sim[i] = c + i < c1 ? to_float(row[c + i]) * inv_norms[row0 + c + i] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      const bool in = c + i < c1;
      top.offer(in ? approx_rank_key(sim[i]) : kSentinelSim, in ? row0 + c + i : kSentinelRow, lane);
    }
  }
  for (int i = lane; i < l.K; i += 32) {
    gs[i] = top.sims[i];
    gr[i] = top.rows[i];
  }
}

// Shared memory batch_rerank_kernel needs.
__host__ __device__ constexpr std::size_t batch_rerank_smem(int ld, int K, int k) {
  return K * (sizeof(float) + sizeof(int)) + exact_rerank_smem(ld, K, k);
}

// One block per query: the block selects the best K approximate candidates of the query's slice
// lists (select_from_lists_block: a bound from the lists' heads, one coalesced pass, a rank
// count; warp 0 merging the slices one after another took ~0.2 ms for 264 slices), then re-ranks
// them in fp32 exactly as the fused scan would and certifies the top k (exact_rerank_block).
// status[b] = 1 where it cannot. `shifts` (null: none): the keys are of the centred rows.
// `trace` (null: none): 4 floats a query, the certificate's operands (exact_rerank_block).
template <int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    batch_rerank_kernel(DotArgs model, const float* queries, const float* query_norms, SliceLists l, int k,
                        float error_bound, float* out_s, int* out_r, int* status, const float* shifts, float* trace) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int b = blockIdx.x;
  float* merged_s = reinterpret_cast<float*>(smem);
  int* merged_r = reinterpret_cast<int*>(merged_s + l.K);
  const long long first = static_cast<long long>(b) * l.slices * l.K;
  select_from_lists_block<kWarps * 32, BoundBy::kHeadRanks>(l.s + first, l.r + first, l.slices, l.K, merged_s,
                                                            merged_r);
  __syncthreads();
  DotArgs a = model;
  a.query = queries + static_cast<long long>(b) * a.dim;
  a.query_norm = query_norms[b];
  exact_rerank_block<kWarps>(a, merged_s, merged_r, l.K, k, error_bound, out_s + static_cast<long long>(b) * k,
                             out_r + static_cast<long long>(b) * k, status + b,
                             smem + l.K * (sizeof(float) + sizeof(int)), shifts ? shifts[b] : 0.0f,
                             trace ? trace + 4ll * b : nullptr);
}

}  // namespace distancies
