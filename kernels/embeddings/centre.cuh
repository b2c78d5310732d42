// The centred copies (docs/batch.md, "Centred copies"): a model whose rows share a common
// direction keeps every cosine in a narrow band, and a reduced copy of the rows then spends its
// precision on the shared part. With mu a fixed vector (the mean of the normalised rows) and
// y = x - |x| mu, every row's similarity to a query q is
//   q . x / (|q| |x|) = q . y / (|q| |x|) + q . mu / |q|,
// the last term the same for every row: ranking by the first is ranking by the similarity, and
// the reduced copies hold y, whose quantisation error scales with |y| / |x| (rho), not with 1.
#pragma once
#include <cuda_runtime.h>

namespace distancies {

// y_j of a row of norm n: one fused multiply-add, so |y_j - (x_j - n mu_j)| <= 2^-24 |y_j| and every
// kernel that reads the centred rows computes the very same value.
__device__ __forceinline__ float centred_value(float x, float n, float mu) { return fmaf(-n, mu, x); }

// Column sums of x / |x| over the rows of non-zero norm (double, atomically added into sum[dim]),
// and how many such rows (count). One block a slice of rows, a thread a column.
__global__ void centre_sum_kernel(const float* x, const float* norms, long long rows, int dim, int ld,
                                  long long rows_per_block, double* sum, unsigned long long* count);

// rho = the largest |y| / |x| over the rows (a warp a row, double, rounded up, atomically maxed
// into rho_bits as a float's bits), and zero_rows set when some row has norm 0.
__global__ void centre_rho_kernel(const float* x, const float* norms, const float* mean, long long rows, int dim,
                                  int ld, unsigned* rho_bits, int* zero_rows);

// shift[b] = q_b . mu / norm_b (double, rounded to nearest): one block of 128 a query.
__global__ void centre_shift_kernel(const float* queries, const float* norms, const float* mean, int dim, float* shift);

}  // namespace distancies
