// The memory floor: read every byte of the model once with 16-byte coalesced loads and
// several loads in flight, writing one float per block so the reads cannot be elided.
#pragma once

namespace distancies {

template <int kBlockThreads, int kUnroll>
__global__ void __launch_bounds__(kBlockThreads) read_floor_kernel(const float4* data, long long n4, float* sink) {
  float acc = 0.0f;
  const long long stride = static_cast<long long>(gridDim.x) * kBlockThreads;
  long long i = static_cast<long long>(blockIdx.x) * kBlockThreads + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n4; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(data + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
  }
  for (; i < n4; i += stride) {
    const float4 v = __ldg(data + i);
    acc += v.x + v.y + v.z + v.w;
  }
  __shared__ float block_acc;
  if (threadIdx.x == 0) block_acc = 0.0f;
  __syncthreads();
  atomicAdd(&block_acc, acc);
  __syncthreads();
  if (threadIdx.x == 0) sink[blockIdx.x] = block_acc;
}

}  // namespace distancies
