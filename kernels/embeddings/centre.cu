// The centred copies' kernels (declared and explained in centre.cuh).
#include "kernels/embeddings/centre.cuh"

#include <cub/block/block_reduce.cuh>

namespace distancies {

__global__ void centre_sum_kernel(const float* x, const float* norms, long long rows, int dim, int ld,
                                  long long rows_per_block, double* sum, unsigned long long* count) {
  const long long r0 = static_cast<long long>(blockIdx.x) * rows_per_block;
  const long long r1 = r0 + rows_per_block < rows ? r0 + rows_per_block : rows;
  for (int j = threadIdx.x; j < dim; j += blockDim.x) {
    double s = 0;
    for (long long r = r0; r < r1; ++r) {
      const float n = norms[r];
      if (n > 0) s += static_cast<double>(x[r * ld + j]) / n;
    }
    atomicAdd(sum + j, s);
  }
  if (threadIdx.x == 0) {
    unsigned long long used = 0;
    for (long long r = r0; r < r1; ++r) used += norms[r] > 0;
    atomicAdd(count, used);
  }
}

__global__ void centre_rho_kernel(const float* x, const float* norms, const float* mean, long long rows, int dim,
                                  int ld, unsigned* rho_bits, int* zero_rows) {
  const long long r = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const float n = norms[r];
  if (!(n > 0)) {
    if (lane == 0) *zero_rows = 1;
    return;
  }
  double ss = 0;
  for (int j = lane; j < dim; j += 32) {
    const double y = centred_value(x[r * ld + j], n, mean[j]);
    ss += y * y;
  }
  for (int o = 16; o > 0; o /= 2) ss += __shfl_xor_sync(~0u, ss, o);
  if (lane == 0) {
    const float rho = __double2float_ru(sqrt(ss) / n * (1 + 0x1p-40));
    atomicMax(rho_bits, __float_as_uint(rho));  // non-negative floats order as their bits
  }
}

__global__ void centre_shift_kernel(const float* queries, const float* norms, const float* mean, int dim,
                                    float* shift) {
  using Sum = cub::BlockReduce<double, 128>;
  __shared__ typename Sum::TempStorage tmp;
  const int b = blockIdx.x;
  const float* q = queries + static_cast<long long>(b) * dim;
  double s = 0;
  for (int j = threadIdx.x; j < dim; j += 128) s += static_cast<double>(q[j]) * mean[j];
  s = Sum(tmp).Sum(s);
  if (threadIdx.x == 0) shift[b] = __double2float_rn(s / norms[b]);
}

}  // namespace distancies
