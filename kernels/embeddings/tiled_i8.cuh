// The tiled int8 copy the batched int8 walk reads (wgmma_filter_i8.cuh; docs/batch.md, "8-bit
// tiles"), and the int8 queries. Rows are sorted by u*(x) = 127 |x| / max_j |x_j|, the largest
// code norm a row's scale allows; every row of a 64-row tile of the sorted rows then takes the
// scale s = |x| / U, U the tile's smallest u* (no code beyond 127), so that u = |x| / s is the same
// U for the whole tile (to rounding: the tile keeps U_lo <= u <= U_hi, worked out exactly) and a
// score's threshold is one integer a query and tile. Each row's own error e = x - s c is known
// exactly: the tile keeps the largest |e| / |x| (nu_max). A query q (normalised as
// batch_prepare does) gets s_q = max |q_j| / 127, codes c_q, A_q = s_q |c_q| and B_q = |q - s_q c_q|:
//   |q . x / |x| - s_q I / u| <= A_q nu + B_q rho     (I = c_q . c, exact in int32)
// by Cauchy-Schwarz on q . x = s_q s I + s_q c_q . e + (q - s_q c_q) . x, rho = 1.
// The centred copy (centre.cuh) codes y = x - |x| mu in place of x, with |x| (the stored norm)
// where |x| stands above: then the bound is on q . y / |x|, and rho_max >= |y| / |x| per tile.
// The projected copy (a centred copy with `extra` > 0 columns) takes the mean direction out of
// the query too, so that the bound scales with the query's residual as the deciding cosines do:
// with w = q . mu / |mu|^2, q . y = (q - w mu) . y + w (mu . y) for any w. The row's mu . y (v,
// one number) is coded in each of the `extra` columns after its dim, the query's w / extra in
// each of its own, so that the one int32 dot over the padded row is the whole q . y (docs/batch.md,
// "Projected int8 copies"); A_q, B_q, nu and rho are those of the longer vectors.
#pragma once
#include <cuda_runtime.h>

namespace distancies {

// What the int8 walk reads besides FilterScanArgs (whose model and queries are the int8 codes,
// its rows the copy's sorted rows).
struct I8FilterArgs {
  const int* order;       // sorted row -> the model's row
  const float4* tiles;    // per 64-row tile of sorted rows: U_lo, U_hi, nu_max, rho_max
  const float4* queries;  // per query: s_q, A_q (rounded up), B_q (rounded up), 0
  float seed_bound;       // E: fp16 keys within it of the fp32 similarity (the thresholds are k-th keys - 2 E)
  float fp32_bound;       // |normalised query . x / |x| - the re-rank's fp32 similarity| at most
  // Appends: block part p of query q writes its candidates at cand[q capacity + p seg ...],
  // counted in shared memory (no global atomic a candidate, no round trip), and leaves its count
  // at seg_counts[q kMaxSegments + p]; select_segments_kernel gathers them.
  long long seg;
  unsigned* seg_counts;
  int resume = 0;  // 1: a block's counts go on from seg_counts (the second pass of a walk in two)
};

namespace tiled_i8 {
constexpr int kMaxSegments = 256;  // parts of a launch (one a multiprocessor, a multiple of the query groups)
}  // namespace tiled_i8

namespace tiled_i8 {

constexpr int kTileRows = 64;  // the walk's row tile

#ifdef __CUDACC__
// E(q, tile) rounded up: |the re-rank's fp32 similarity - s_q I / u| for every row of the tile
// (q: s_q, A_q, B_q; u: U_lo, U_hi, nu_max, rho_max).
__device__ __forceinline__ float score_bound(const float4& q, const float4& u, float fp32_bound) {
  return __fadd_ru(__fmaf_ru(q.y, u.z, __fmul_ru(q.z, u.w)), fp32_bound);
}

// The walk's upper bound of the fp32 similarity of a score I, rounded up: s_q I / U_lo + E for
// I >= 0, s_q I / U_hi + E below (|I| < 2^24: exact as a float); r_lo = 1 / U_lo rounded up,
// r_hi = 1 / U_hi rounded down, e = score_bound.
__device__ __forceinline__ float upper_of(int I, float s_q, float r_lo, float r_hi, float e) {
  return __fadd_ru(__fmul_ru(__fmul_ru(static_cast<float>(I), s_q), I >= 0 ? r_lo : r_hi), e);
}

// A lower bound of the fp32 similarity of a candidate the walk keyed `upper`, -inf where it would
// need I <= 0. The walk's key is a + E rounded up, a = s_q I / U_lo rounded up three times, so
// a >= upper (1 - 2^-23) - E (rounding up a positive sum gains less than 2^-23 of it),
// s_q I / U_lo >= a (1 - 2^-21), s_q I / u >= that U_lo / U_hi, and the similarity is within E
// of s_q I / u; each step rounded down.
__device__ __forceinline__ float lower_from_upper(float upper, const float4& q, const float4& u, float fp32_bound) {
  const float e = score_bound(q, u, fp32_bound);
  const float a = __fsub_rd(__fmul_rd(upper, 1.0f - 0x1p-23f), e);
  if (!(a > 0.0f && a < __builtin_huge_valf())) return -__builtin_huge_valf();
  return __fsub_rd(__fmul_rd(__fmul_rd(a, 1.0f - 0x1p-21f), __fdiv_rd(u.x, u.y)), e);
}
#endif
constexpr int kThreads = 256;
constexpr int kMinExtra = 48;  // the projected copy's columns for mu . y: w / extra splits finer with more

// The plain copy's columns (the dimension in 16-byte steps) and the projected copy's (room for
// at least kMinExtra more); the int8 queries' buffer is sized for the second.
constexpr int plain_ldg(int dim) { return (dim + 15) / 16 * 16; }
constexpr int projected_ldg(int dim) { return (dim + kMinExtra + 15) / 16 * 16; }

}  // namespace tiled_i8

// How the int8 queries are coded: plain (extra 0), or projected against the centred copy's mean.
struct TiledI8Projection {
  const float* mean = nullptr;  // the centre's mu (dim floats)
  float mean_norm2 = 0;         // |mu|^2 (any positive value keeps the identity; this one makes q - w mu small)
  int extra = 0;                // the copy's columns holding mu . y
};

// The sort key u* of every row (a warp a row), zero rows +inf (last), and the identity order.
// `mean` null: the plain copy; else the centred one, of y = x - norms[r] mean (centre.cuh), and with
// `extra` > 0 the projected one, whose largest value may be mu . y.
__global__ void tiled_i8_keys_kernel(const float* x, long long rows, int dim, int ld, const float* norms,
                                     const float* mean, int extra, float* key, int* order);

// One block (tiled_i8::kThreads) a 64-row tile of the sorted rows: each row's codes with
// s = |x| / U (U the tile's first, smallest key; 1 for a tile of zero rows), and the tile's U_lo,
// U_hi, nu_max from each row's exact u and |e| / |x| (double; zero rows score 0 on every path and
// count for nothing).
// Projected (`extra` > 0): mu . y (double) coded in columns dim .. dim + extra - 1 too.
__global__ void tiled_i8_codes_kernel(const float* x, long long rows, int dim, int ld, const float* norms,
                                      const float* mean, int extra, const int* order, const float* sorted_key, int ldg,
                                      signed char* codes, float4* tiles);

// One block of 128 a query: normalised as normalize_queries_kernel does (q_j * (1 / |q|) in fp32),
// then codes with s_q = max |q_j| / 127 and the query's A_q, B_q. A query with no finite non-zero
// largest element gets zero codes and s_q = 1 (the range guard refuses it; the fallback answers).
// Projected (p.extra > 0): the codes of q - w mu in the first dim columns and w / extra in the
// next extra, with A_q and B_q of that longer vector (B_q in double from the exact q - w mu).
__global__ void tiled_i8_queries_kernel(const float* queries, const float* norms, int dim, int ldg, TiledI8Projection p,
                                        signed char* codes, float4* meta);

}  // namespace distancies
