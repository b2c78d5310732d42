// The fp32 dot of one row with the query as the fused kernels compute it: lane l takes the
// 16-byte pieces l, l+32, ... in that order through an explicit fma chain, then a butterfly
// sum broadcast from lane 0. Explicit intrinsics fix the arithmetic, so every kernel that uses
// these gets bit-identical similarities (the re-rank relies on it).
#pragma once
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

__device__ __forceinline__ float fma4(float acc, float4 q, float4 v) {
  acc = __fmaf_rn(q.x, v.x, acc);
  acc = __fmaf_rn(q.y, v.y, acc);
  acc = __fmaf_rn(q.z, v.z, acc);
  return __fmaf_rn(q.w, v.w, acc);
}

// Every lane gets lane 0's total (lanes' butterfly sums may differ in the last bit).
__device__ __forceinline__ float warp_sum_broadcast(float v) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off);
  return __shfl_sync(0xffffffffu, v, 0);
}

__device__ __forceinline__ float row_dot_f32(const float4* row, const float4* q4, int ld4, int lane) {
  float acc = 0.0f;
  for (int j = lane; j < ld4; j += 32) acc = fma4(acc, q4[j], __ldg(row + j));
  return warp_sum_broadcast(acc);
}

// The fp32 similarity of model row `row` to the staged query q4 (stage_query), as every exact
// re-rank computes it (the warp's lanes together; every lane gets it).
__device__ __forceinline__ float row_similarity(const DotArgs& a, const float4* q4, long long row, int lane) {
  const int ld4 = a.ld / 4;
  return cosine_from_dot(row_dot_f32(reinterpret_cast<const float4*>(a.vectors) + row * ld4, q4, ld4, lane),
                         a.query_norm, a.norms[row]);
}

}  // namespace distancies
