// The bounds that let a 16-bit scan or a batched GEMM stand in for the fp32 one, and the range
// guard they rest on (docs/variants.md derives them; docs/batch.md for the GEMM).
#pragma once
#include "kernels/embeddings/storage.hpp"
#include "runtime/norm_range.hpp"

namespace distancies {

// The range guard. Both bounds assume every fp32 product, partial sum, norm product and
// quotient of the search is a normal number (or an exact zero): subnormal arithmetic loses
// relative accuracy (the audit's counterexample: 507 x the bound), and Inf/NaN lose everything.
// They hold when |q| * n_min >= 2^-100 and |q| * n_max <= 2^120: then |q_j x_j| <= |q||x| <= 2^120,
// the denominators |q||x| lie in [2^-100, 2^120], and a product that still underflows
// costs at most 2^-150 absolutely, <= D * 2^-50 relative to |q||x| (a term both bounds include).
// Outside the guard the reduced paths are not run: the exact fp32 pipeline answers (counted).
constexpr double kGuardLow = 0x1p-100;
constexpr double kGuardHigh = 0x1p120;
bool reduced_in_range(float query_norm, const NormRange& r);

// The batched pipelines' guard for one query: the normalised query q / |q| (norm 1) must be in
// range for the GEMM, |q| itself for the exact re-rank, and 1 / |q| must be normal.
bool batch_query_in_range(float query_norm, const NormRange& r);

// Largest possible |similarity from the 16-bit copy - similarity from the fp32 scan| for any
// row with a non-zero norm >= min_norm, for this query, inside the range guard. Zero-norm
// rows score 0 on both paths.
// I8: the part of the bound that is the same for every row (the fp32 arithmetic of both paths);
// the quantisation error is per row, s_i * i8_row_bound_factor / n_i, added to the row's key.
// `rho`: >= |y| / |x| for every row where the copy holds the centred rows y
// (kernels/embeddings/centre.cuh); the copy's terms scale with it, the fp32 scan's do not.
// `correction` (I8, centred): |w| |mu|_1 where the scan adds w c_i to each row's dot (its fma's
// rounding; 0 without it).
float reduced_error_bound(Storage s, int dim, const float* query, float query_norm, float min_norm, float rho = 1.0f,
                          float correction = 0.0f);
// >= |q|_1 / (2 |q|) with a margin for the rounding of x_j / s_i and of the key's own arithmetic.
float i8_row_bound_factor(int dim, const float* query, float query_norm);
// The centred int8 copy, whose rows carry c_i = mu . (y_i - s_i codes_i), scanned with the weight
// w on c_i: the row-bound factor >= (|q - w mu|_1 + |w| |mu|_1 2^-22) / (2 |q|) (the second term
// for c_i's own rounding), and reduced_error_bound's `correction`, |w| |mu|_1 (1 + 2^-20).
struct I8CentredBound {
  float row_bound_factor;
  float correction;
};
I8CentredBound i8_centred_bound(int dim, const float* query, float query_norm, const float* mean, float weight);
// The int8 scan splits the query in steps of s_q = max |q_j| / 127: s_q must be a normal fp32
// (max |q_j| >= kI8SmallestMax) for the split's error to be the bound's; a zero query has nothing
// to split and is refused by the norm guard already.
constexpr float kI8SmallestMax = 0x1p-118f;
bool i8_query_in_range(int dim, const float* query);

// Largest possible |approximate cosine from a batched GEMM tile - cosine from the fp32 scan|,
// for any query (normalised on the GPU) and any row of norm >= min_norm (docs/batch.md), inside
// batch_query_in_range; min_norm <= 0 (unknown) gives +inf. `scores` F16: the tile's scores
// are rounded to fp16 before the selection reads them.
// `rho` >= |y| / |x| for every row where the GEMM reads the centred rows y (kernels/embeddings/
// centre.cuh): the operand terms scale with it, the fp32 scan's own do not (1: the plain rows).
float gemm_error_bound(GemmInput g, int dim, float min_norm, Storage scores = Storage::F32, float rho = 1.0f);

// What the centred copies add to a bound (docs/batch.md, "Centred copies"): y's one rounding
// (2^-24 |y| / |x| <= 2^-24 rho), the query's shift q . mu / |q| rounded from double (2^-24 |mu|,
// |mu| <= 1) and |q| / norm within 1.001 of 1 inside the range guard; twice that, rounded up.
float centre_slack(float rho);
// A bound of the centred copies: `bound` plus centre_slack(rho), rounded up (a little over).
float with_centre_slack(float bound, float rho);

// The int8 walk's fp32 part (docs/batch.md, "8-bit tiles"): the largest |q . x / |x| - the fp32
// scan's similarity| for the normalised query q and the row's exact norm |x| (the int8 bound
// covers the rest): the fp32 GEMM bound, which holds it (its normalisation, scan and scaling
// terms), plus (D + 5) 2^-23 for |x| against the stored fp32 norm.
float i8_walk_fp32_bound(int dim, float min_norm);

}  // namespace distancies
