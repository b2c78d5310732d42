// Writes the benchmark matrix on the device, in either layout.
#pragma once
#include "kernels/moments/moments_data.cuh"

namespace distancies {

template <bool kColMajor>
__global__ void moments_fill_kernel(float* x, unsigned long long seed, long long rows, int cols) {
  const long long total = rows * cols;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = kColMajor ? i % rows : i / cols, c = kColMajor ? i / rows : i % cols;
    x[i] = moments_element(seed, r, c, cols);
  }
}

}  // namespace distancies
