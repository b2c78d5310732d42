// The floor of the posting-list study: read every list each query touches once, in chunks of
// at most kFloorChunk ids a block, and write one word per block so the reads cannot be elided.
#pragma once

#include "kernels/intersect/intersect_args.cuh"

namespace distancies {

template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    touched_floor_kernel(const unsigned* ids, const FloorChunk* chunks, unsigned* sink) {
  const FloorChunk c = chunks[blockIdx.x];
  unsigned acc = 0;
  for (unsigned i = threadIdx.x; i < c.size; i += kThreads) acc ^= __ldg(ids + c.begin + i);
  __shared__ unsigned block_acc;
  if (threadIdx.x == 0) block_acc = 0;
  __syncthreads();
  atomicXor(&block_acc, acc);
  __syncthreads();
  if (threadIdx.x == 0) sink[blockIdx.x] = block_acc;
}

}  // namespace distancies
