// One pass over the model: each warp computes whole rows with 16-byte loads (kRows rows and
// kSegs loads per lane in flight), then keeps its own top k, so the similarity array never
// goes to memory. One block selects the best k of the blocks' lists (list_select.cuh). The
// per-lane order of the fma chain is row_dot_f32's, so a re-rank reproduces it bit for bit.
#pragma once
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/warp_merge.cuh"
#include "kernels/common/warp_topk.cuh"
#include "kernels/embeddings/row_dot.cuh"

namespace distancies {

// kAllSims: no lists; every row's similarity goes to cand_s[row] (k beyond the lists: a radix
// select follows), with the same bits as the lists would hold.
template <int kWarps, int kRows, int kSegs, int kMinBlocksPerSm, bool kAllSims = false>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocksPerSm)
    fused_scan_topk_kernel(DotArgs a, int k, float* cand_s, int* cand_r) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int ld4 = a.ld / 4;
  float4* q4 = reinterpret_cast<float4*>(smem);
  const BlockLists lists = carve_block_lists(q4 + ld4, kWarps, k);
  float* qf = reinterpret_cast<float*>(q4);
  stage_query(a, qf);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  WarpTopk top{lists.s + warp * k, lists.r + warp * k, k};
  if (!kAllSims) top.clear(lane);
  __syncthreads();

  const float4* vec4 = reinterpret_cast<const float4*>(a.vectors);
  const long long gw = static_cast<long long>(blockIdx.x) * kWarps + warp;
  const long long nw = static_cast<long long>(gridDim.x) * kWarps;
  for (long long base = gw * kRows; base < a.rows; base += nw * kRows) {
    float acc[kRows], norm[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      acc[r] = 0.0f;
      norm[r] = base + r < a.rows ? __ldg(a.norms + base + r) : 0.0f;  // in flight with the rows, not after
    }
    for (int j0 = 0; j0 < ld4; j0 += 32 * kSegs) {
      float4 v[kRows][kSegs];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int s = 0; s < kSegs; ++s) {
          const int j = j0 + s * 32 + lane;
          v[r][s] = (base + r < a.rows && j < ld4) ? __ldcs(vec4 + (base + r) * ld4 + j) : make_float4(0, 0, 0, 0);
        }
#pragma unroll
      for (int s = 0; s < kSegs; ++s) {
        const int j = j0 + s * 32 + lane;
        if (j < ld4) {
          const float4 q = q4[j];
#pragma unroll
          for (int r = 0; r < kRows; ++r) acc[r] = fma4(acc[r], q, v[r][s]);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kRows; ++r) acc[r] = warp_sum_broadcast(acc[r]);  // same bits as row_dot_f32
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      const long long row = base + r;
      if (row < a.rows) {
        const float sim = cosine_from_dot(acc[r], a.query_norm, norm[r]);
        if constexpr (kAllSims) {
          if (lane == r) cand_s[row] = sim;
        } else if (top.admits(sim, static_cast<int>(row))) {
          top.insert(sim, static_cast<int>(row), lane);
        }
      }
    }
  }
  // Only now: a dependent grid scheduled earlier would hold SM slots the scan needs.
  allow_dependents();
  // The best k of the block's warp lists; one list per block goes out.
  if constexpr (!kAllSims)
    block_select_lists<kWarps>(lists, k, cand_s + static_cast<long long>(blockIdx.x) * k,
                               cand_r + static_cast<long long>(blockIdx.x) * k);
}

}  // namespace distancies
