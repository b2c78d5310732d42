#include "kernels/embeddings/radix_select.cuh"
#include "kernels/common/launch.hpp"

namespace distancies {

__global__ void radix_histogram_kernel(const float* sims, int n, int shift, RadixState* st) {
  __shared__ unsigned h[256];
  for (int i = threadIdx.x; i < 256; i += blockDim.x) h[i] = 0;
  __syncthreads();
  const unsigned prefix = st->prefix, mask = st->mask;
  for (long long i = global_thread_index(); i < n; i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const unsigned key = radix_key(sims[i]);
    if ((key & mask) == prefix) atomicAdd(&h[(key >> shift) & 0xFF], 1u);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    if (h[i]) atomicAdd(&st->hist[i], h[i]);
}

__global__ void radix_choose_kernel(int shift, RadixState* st) {
  int above = 0, d = 255;
  for (; d > 0; --d) {
    if (above + static_cast<int>(st->hist[d]) >= st->remaining) break;
    above += st->hist[d];
  }
  st->prefix |= static_cast<unsigned>(d) << shift;
  st->mask |= 0xFFu << shift;
  st->remaining -= above;
  for (int i = 0; i < 256; ++i) st->hist[i] = 0;
}

}  // namespace distancies
