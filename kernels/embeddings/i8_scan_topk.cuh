// The int8 first pass (docs/variants.md, "int8 copy"): the fused scan over an int8 copy with a
// per-row scale (a quarter of the fp32 bytes), best K candidates per warp.
// The query is split once per block into two int8 vectors, q ~ s_q (hi + lo / 254), so each
// 4 bytes of a row cost two dp4a (exact int32 sums) instead of 4 conversions and 4 fmas; the
// fp32 arithmetic comes after the sums. A row is ranked by its approximate similarity plus its
// own error bound,
//   key_i = cos~_i + s_i * row_bound_factor / n_i,   row_bound_factor >= |q|_1 / (2 |q|),
// With `correction` (the centred copy), w c_i is added to each row's dot first: c_i is the row's
// quantisation error along mu, so only the query's part off mu, q - w mu, meets the rest of it
// and row_bound_factor >= |q - w mu|_1 / (2 |q|) (plus c_i's own rounding; variants/embeddings/precision.hpp).
// an upper bound of its fp32 similarity less the global term (the split query's residual and
// the roundings), which the re-rank's certificate adds: keeping the K best keys keeps every row
// whose fp32 similarity could reach them, so exact_rerank_block's certificate holds as for the
// 16-bit copies.
#pragma once
#include <cstdint>

#include "kernels/common/dependent_launch.cuh"
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
__device__ __forceinline__ void dp4a16(int& hi_sum, int& lo_sum, const int (&qh)[4], const int (&ql)[4], uint4 raw) {
  const int w[4] = {static_cast<int>(raw.x), static_cast<int>(raw.y), static_cast<int>(raw.z), static_cast<int>(raw.w)};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    hi_sum = __dp4a(w[i], qh[i], hi_sum);
    lo_sum = __dp4a(w[i], ql[i], lo_sum);
  }
}

// The sums of kValues values over the kLanes lanes of a group, transposed: at each halving step a
// lane keeps half of its values and trades the other half with its partner, so after log2(kLanes)
// steps lane g of the group holds the whole sum of value g (kValues == kLanes): kLanes - 1
// shuffles for kLanes sums, where reducing each value by itself takes kLanes log2(kLanes).
template <int kLanes, int kValues>
__device__ __forceinline__ int transpose_sum(int (&x)[kValues], int group_lane) {
  static_assert(kValues == kLanes, "one whole sum per lane");
#pragma unroll
  for (int o = kLanes / 2, cnt = kValues; o >= 1; o /= 2, cnt /= 2) {
    const bool upper = (group_lane & o) != 0;
#pragma unroll
    for (int j = 0; j < cnt / 2; ++j) {
      const int send = upper ? x[j] : x[j + cnt / 2];
      const int keep = upper ? x[j + cnt / 2] : x[j];
      x[j] = keep + __shfl_xor_sync(0xffffffffu, send, o);
    }
  }
  return x[0];
}

constexpr int kI8RowsPerWarp = 16;  // i8_scan_topk_kernel's shape: 4 groups of 8 lanes, 4 rows each

// Eight lanes per row (kSegs 16-byte loads each: D <= 128 kSegs in one round; 24 of them for 19
// at D = 300, against 32 with half a warp per row), four groups per warp, each on kGroupRows = 4
// rows at once (16 rows a warp), the lane's slice of the split query in registers for one-round
// dims. The 2 x 4 sums of a group (hi and lo of 4 rows) are reduced transposed (7 shuffles, then
// one to pair hi with lo) where a row-by-row reduction took 60 shuffles for 12 rows: with rows
// half as long as the 16-bit copy's, the per-row work, not the bytes, was what kept the scan at
// 1.22 x its floor (Nsight Compute: 63 % issue slots busy, 2.55 TB/s). A warp sees ~1,000 rows
// of the model, so a list of K = 64 took ~240 insertions a warp: rows below the block's floor
// (BlockFloor) are no longer offered, and the first rounds go in by one merge (the pipeline
// 0.284 -> 0.266 ms; the 16-bit one 0.490 -> 0.482).
// kAllKeys: no lists; every row's key goes to cand_s[row] (the large-k path selects from them).
// A streamed 16-byte load (evict-first, like __ldcs) that asks L2 to fetch the whole 256-byte
// block: a row of the int8 copy (304 bytes) starts anywhere in a block, and the neighbour rows'
// sectors arrive with it (Nsight Compute: L2 hit rate 10 -> 32 %, the scan 260 -> 257 us).
__device__ __forceinline__ uint4 ld_stream_pf256(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cs.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
// kCorrected: the centred copy's rows carry `correction` (a template flag, so the plain copy's
// scan keeps its registers and epilogue as they were).
template <int kWarps, int kSegs, int kMinBlocksPerSm, bool kAllKeys = false, bool kCorrected = false>
__global__ void __launch_bounds__(kWarps * 32, kMinBlocksPerSm)
    i8_scan_topk_kernel(const uint4* vec16, const float* scale, int rld, const float* query, int dim, float query_norm,
                        float row_bound_factor, const float* norms, int rows, int K, float* cand_s, int* cand_r,
                        int* status, const float* correction = nullptr, float weight = 0.0f) {
  constexpr int kLanes = 8, kGroupRows = 4, kGroups = 32 / kLanes;
  constexpr int kRowsPerWarp = kGroups * kGroupRows;
  static_assert(kRowsPerWarp == kI8RowsPerWarp, "the host counts rows by kI8RowsPerWarp");
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ unsigned max_bits;
  __shared__ int floor_bits;
  const BlockFloor floor{&floor_bits};
  floor.init();
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
  for (int j = threadIdx.x; j < rld; j += blockDim.x)
    split_query_value(j < dim ? query[j] : 0.0f, s_q, qhi + j, qlo + j);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / kLanes, gl = lane % kLanes;
  WarpTopk top{lists.s + warp * K, lists.r + warp * K, K};
  if (!kAllKeys) top.clear(lane);
  __syncthreads();
  const int n16 = rld / 16;
  constexpr int kRound = kLanes * kSegs;
  int qh[kSegs][4], ql[kSegs][4];
  auto load_query = [&](int j0) {
#pragma unroll
    for (int s = 0; s < kSegs; ++s) {
      const int j = j0 + s * kLanes + gl;
      const int4 h = j < n16 ? reinterpret_cast<const int4*>(qhi)[j] : make_int4(0, 0, 0, 0);
      const int4 l = j < n16 ? reinterpret_cast<const int4*>(qlo)[j] : make_int4(0, 0, 0, 0);
      qh[s][0] = h.x, qh[s][1] = h.y, qh[s][2] = h.z, qh[s][3] = h.w;
      ql[s][0] = l.x, ql[s][1] = l.y, ql[s][2] = l.z, ql[s][3] = l.w;
    }
  };
  const bool one_round = n16 <= kRound;
  if (one_round) load_query(0);
  const long long gw = static_cast<long long>(blockIdx.x) * kWarps + warp;
  const long long nw = static_cast<long long>(gridDim.x) * kWarps;
  const long long step = nw * kRowsPerWarp;
  // Group g works on rows base + 4g .. base + 4g + 3. Software pipelining: the next round's (or
  // the next rows') loads are issued before this round's epilogue.
  uint4 v[kGroupRows][kSegs];
  auto load_rows = [&](long long b, int j0) {
#pragma unroll
    for (int r = 0; r < kGroupRows; ++r) {
      const long long row = b + group * kGroupRows + r;
      const uint4* p = vec16 + row * n16;
#pragma unroll
      for (int s = 0; s < kSegs; ++s) {
        const int j = j0 + s * kLanes + gl;
        v[r][s] = (row < rows && j < n16) ? ld_stream_pf256(p + j) : make_uint4(0, 0, 0, 0);
      }
    }
  };
  // After the transposed sums, even lane 2r of a group holds row 4g + r's hi sum (and takes the
  // lo sum from lane 2r + 1): it reads that row's norm and scale for the epilogue.
  const int my_offset = group * kGroupRows + gl / 2;
  const bool key_lane = (gl % 2) == 0;
  auto in_rows = [&](long long b) { return key_lane && b + my_offset < rows; };
  float next_norm = 0.0f, next_sc = 0.0f, next_c = 0.0f;
  auto load_facts = [&](long long b) {
    next_norm = in_rows(b) ? __ldg(norms + b + my_offset) : 0.0f;
    next_sc = in_rows(b) ? __ldg(scale + b + my_offset) : 0.0f;
    if constexpr (kCorrected) next_c = in_rows(b) ? __ldg(correction + b + my_offset) : 0.0f;
  };
  long long base = gw * kRowsPerWarp;
  if (base < rows) {
    load_rows(base, 0);
    load_facts(base);
  }
  for (; base < rows; base += step) {
    const bool mine = in_rows(base);
    const float norm = next_norm, sc = next_sc, cr = next_c;
    int x[2 * kGroupRows];  // hi and lo of each of the group's rows: x[2r], x[2r + 1]
#pragma unroll
    for (int i = 0; i < 2 * kGroupRows; ++i) x[i] = 0;
    for (int j0 = 0; j0 < n16; j0 += kRound) {
      if (!one_round) load_query(j0);
#pragma unroll
      for (int s = 0; s < kSegs; ++s)
#pragma unroll
        for (int r = 0; r < kGroupRows; ++r) dp4a16(x[2 * r], x[2 * r + 1], qh[s], ql[s], v[r][s]);
      if (j0 + kRound < n16) {
        load_rows(base, j0 + kRound);
      } else if (base + step < rows) {
        load_rows(base + step, 0);
        load_facts(base + step);
      }
    }
    const int own = transpose_sum<kLanes>(x, gl);  // lane gl: the sum of value gl
    const int lo_total = __shfl_down_sync(0xffffffffu, own, 1);
    const int hi_total = own;
    float key = kSentinelSim;
    int row = kSentinelRow;
    if (mine) {
      const float sum = static_cast<float>(hi_total) + static_cast<float>(lo_total) / 254.0f;
      // A zero row is exact (s = 0, no error); a NaN scale ranks as +inf.
      const float bound = norm > 0.0f ? sc * row_bound_factor / norm : 0.0f;
      float dot = sc * (s_q * sum);
      if constexpr (kCorrected) dot = fmaf(weight, cr, dot);
      key = approx_rank_key(cosine_from_dot(dot, query_norm, norm) + bound);
      row = static_cast<int>(base + my_offset);
    }
    if constexpr (kAllKeys) {
      if (row != kSentinelRow) cand_s[row] = key;  // every row's key, for the large-k select
    } else {
      const bool pass = floor.passes(key);
      top.offer(pass ? key : kSentinelSim, pass ? row : kSentinelRow, lane);
      floor.raise(top, lane);
    }
  }
  allow_dependents();  // the re-rank may be scheduled now (not earlier: it would hold SM slots)
  if constexpr (!kAllKeys)
    block_select_lists<kWarps>(lists, K, cand_s + static_cast<long long>(blockIdx.x) * K,
                               cand_r + static_cast<long long>(blockIdx.x) * K);
}

}  // namespace distancies
