#include "kernels/matmul/naive_matmul.cuh"

namespace distancies {

__global__ void naive_matmul_kernel(MatmulArgs a) {
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= a.m || col >= a.n) return;
  float s = 0.0f;
  for (int k = 0; k < a.k; ++k)
    s = fmaf(a.a[static_cast<long long>(row) * a.k + k], a.b[static_cast<long long>(k) * a.n + col], s);
  a.c[static_cast<long long>(row) * a.n + col] = s;
}

}  // namespace distancies
