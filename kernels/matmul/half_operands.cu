#include "kernels/matmul/half_operands.cuh"

namespace distancies {

__global__ void pad_to_half_kernel(const float* in, __half* out, int rows, int cols, int out_rows, int ld) {
  const long long total = static_cast<long long>(out_rows) * ld;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(blockDim.x) * gridDim.x) {
    const long long r = i / ld;
    const int c = static_cast<int>(i - r * ld);
    out[i] = r < rows && c < cols ? __float2half_rn(in[r * cols + c]) : __float2half_rn(0.0f);
  }
}

}  // namespace distancies
