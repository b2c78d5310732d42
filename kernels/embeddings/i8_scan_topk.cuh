// The int8 first pass (docs/variants.md, "int8 copy"): the fused scan over an int8 copy with a
// per-row scale (a quarter of the fp32 bytes), best K candidates per warp.
// The query is split once per block into two int8 vectors, q ~ s_q (hi + lo / 254), so each
// 4 bytes of a row cost two dp4a (exact int32 sums) instead of 4 conversions and 4 fmas; the
// fp32 arithmetic comes after the sums. A row is ranked by its approximate similarity plus its
// own error bound,
//   key_i = cos~_i + s_i * row_bound_factor / n_i,   row_bound_factor >= |q|_1 / (2 |q|),
// an upper bound of its fp32 similarity less the global term (the split query's residual and
// the roundings), which the re-rank's certificate adds: keeping the K best keys keeps every row
// whose fp32 similarity could reach them, so exact_rerank_block's certificate holds as for the
// 16-bit copies.
#pragma once
#include <cstdint>

#include "kernels/common/list_select.cuh"
#include "kernels/common/ranking.hpp"
#include "kernels/common/warp_topk.cuh"
#include "kernels/embeddings/row_dot.cuh"

namespace distancies {

// The split of one query value (s_q = max |q| / 127 > 0): hi = rint(q / s_q), lo =
// rint(254 (q / s_q - hi)), both in [-127, 127]; |q - s_q (hi + lo / 254)| <= s_q (1/508 + 2^-20).
// tests/fp_emulation.hpp repeats it.
__device__ __forceinline__ void split_query_value(float q, float s_q, signed char* hi, signed char* lo) {
  if (!(s_q > 0.0f)) {
    *hi = *lo = 0;
    return;
  }
  const float t = q / s_q;
  const float h = fminf(127.0f, fmaxf(-127.0f, rintf(t)));
  const float l = fminf(127.0f, fmaxf(-127.0f, rintf(254.0f * (t - h))));
  *hi = static_cast<signed char>(h);
  *lo = static_cast<signed char>(l);
}

// Two dp4a per 4 bytes of a row: sums of hi * c and lo * c, exact in int32 (|sum| <= 127^2 D).
template <int kSegs>
__device__ __forceinline__ void dp4a16(int& hi_sum, int& lo_sum, const int (&qh)[kSegs][4], const int (&ql)[kSegs][4],
                                       int s, uint4 raw) {
  const int w[4] = {static_cast<int>(raw.x), static_cast<int>(raw.y), static_cast<int>(raw.z), static_cast<int>(raw.w)};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    hi_sum = __dp4a(w[i], qh[s][i], hi_sum);
    lo_sum = __dp4a(w[i], ql[s][i], lo_sum);
  }
}

// A half-warp per row (16 lanes x kSegs 16-byte loads: D <= 256 kSegs in one round), a warp on
// 2 x kPairs rows at once, the lane's slice of the split query in registers for one-round dims.
// kAllKeys: no lists; every row's key goes to cand_s[row] (the large-k path selects from them).
template <int kWarps, int kPairs, int kSegs, int kMinBlocksPerSm, bool kAllKeys = false>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocksPerSm)
    i8_scan_topk_kernel(const uint4* vec16, const float* scale, int rld, const float* query, int dim, float query_norm,
                        float row_bound_factor, const float* norms, int rows, int K, float* cand_s, int* cand_r,
                        int* status) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned max_bits;
  if (blockIdx.x == 0 && threadIdx.x == 0) *status = 0;
  // rld bytes of hi codes, then rld bytes of lo codes (rld is a multiple of 16), then the lists.
  signed char* qhi = reinterpret_cast<signed char*>(smem);
  signed char* qlo = qhi + rld;
  const BlockLists lists = carve_block_lists(reinterpret_cast<float*>(qlo + rld), kWarps, K);
  if (threadIdx.x == 0) max_bits = 0;
  __syncthreads();
  // max |q_j|: the bits of non-negative floats order like the floats (the range guard keeps
  // the query finite).
  unsigned m = 0;
  for (int j = threadIdx.x; j < dim; j += blockDim.x) m = max(m, __float_as_uint(fabsf(query[j])));
  atomicMax(&max_bits, m);
  __syncthreads();
  const float s_q = __uint_as_float(max_bits) / 127.0f;
  for (int j = threadIdx.x; j < rld; j += blockDim.x) split_query_value(j < dim ? query[j] : 0.0f, s_q, qhi + j, qlo + j);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int half = lane / 16, hl = lane % 16;
  WarpTopk top{lists.s + warp * K, lists.r + warp * K, K};
  if (!kAllKeys) top.clear(lane);
  __syncthreads();
  const int n16 = rld / 16;
  constexpr int kRound = 16 * kSegs;
  int qh[kSegs][4], ql[kSegs][4];
  auto load_query = [&](int j0) {
#pragma unroll
    for (int s = 0; s < kSegs; ++s) {
      const int j = j0 + s * 16 + hl;
      const int4 h = j < n16 ? reinterpret_cast<const int4*>(qhi)[j] : make_int4(0, 0, 0, 0);
      const int4 l = j < n16 ? reinterpret_cast<const int4*>(qlo)[j] : make_int4(0, 0, 0, 0);
      qh[s][0] = h.x, qh[s][1] = h.y, qh[s][2] = h.z, qh[s][3] = h.w;
      ql[s][0] = l.x, ql[s][1] = l.y, ql[s][2] = l.z, ql[s][3] = l.w;
    }
  };
  const bool one_round = n16 <= kRound;
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
        v[p][s] = (row < rows && j < n16) ? __ldcs(vec16 + row * n16 + j) : make_uint4(0, 0, 0, 0);
      }
  };
  // Lane r < kRowsPerWarp reads row base + r's norm and scale for the epilogue.
  auto in_rows = [&](long long b) { return lane < kRowsPerWarp && b + lane < rows; };
  float next_norm = 0.0f, next_sc = 0.0f;
  auto load_facts = [&](long long b) {
    next_norm = in_rows(b) ? __ldg(norms + b + lane) : 0.0f;
    next_sc = in_rows(b) ? __ldg(scale + b + lane) : 0.0f;
  };
  long long base = gw * kRowsPerWarp;
  if (base < rows) {
    load_rows(base, 0);
    load_facts(base);
  }
  for (; base < rows; base += step) {
    const bool mine = in_rows(base);
    const float norm = next_norm, sc = next_sc;
    int hs[kPairs], ls[kPairs];
#pragma unroll
    for (int p = 0; p < kPairs; ++p) hs[p] = ls[p] = 0;
    for (int j0 = 0; j0 < n16; j0 += kRound) {
      if (!one_round) load_query(j0);
#pragma unroll
      for (int s = 0; s < kSegs; ++s)
#pragma unroll
        for (int p = 0; p < kPairs; ++p) dp4a16<kSegs>(hs[p], ls[p], qh, ql, s, v[p][s]);
      if (j0 + kRound < n16) {
        load_rows(base, j0 + kRound);
      } else if (base + step < rows) {
        load_rows(base + step, 0);
        load_facts(base + step);
      }
    }
    // Lane r < kRowsPerWarp takes row base + r's sums (from lane 16 (r % 2) of pair r / 2) and
    // already holds its norm and scale: the keys of all the warp's rows in one pass, offered
    // together (a ballot; only rows that beat the list's k-th cost an insertion).
    int hi_total = 0, lo_total = 0;
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
#pragma unroll
      for (int off = 8; off > 0; off /= 2) {
        hs[p] += __shfl_xor_sync(0xffffffffu, hs[p], off);
        ls[p] += __shfl_xor_sync(0xffffffffu, ls[p], off);
      }
      const int h = __shfl_sync(0xffffffffu, hs[p], 16 * (lane % 2));
      const int l = __shfl_sync(0xffffffffu, ls[p], 16 * (lane % 2));
      if (lane / 2 == p) hi_total = h, lo_total = l;
    }
    float key = kSentinelSim;
    int row = kSentinelRow;
    if (mine) {
      const float sum = static_cast<float>(hi_total) + static_cast<float>(lo_total) / 254.0f;
      // A zero row is exact (s = 0, no error); a NaN scale ranks as +inf.
      const float bound = norm > 0.0f ? sc * row_bound_factor / norm : 0.0f;
      key = approx_rank_key(cosine_from_dot(sc * (s_q * sum), query_norm, norm) + bound);
      row = static_cast<int>(base + lane);
    }
    if constexpr (kAllKeys) {
      if (row != kSentinelRow) cand_s[row] = key;  // every row's key, for the large-k select
    } else {
      top.offer(key, row, lane);
    }
  }
  if constexpr (!kAllKeys)
    block_select_lists<kWarps>(lists, K, cand_s + static_cast<long long>(blockIdx.x) * K,
                               cand_r + static_cast<long long>(blockIdx.x) * K);
}

}  // namespace distancies
