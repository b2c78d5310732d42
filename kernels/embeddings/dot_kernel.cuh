// The one __global__ entry every DotProduct agent runs under: it stages the query in shared
// memory (every study kernel does), zero-padded to the row stride so 16-byte reads of the
// padding multiply zeros, and hands the block to the agent's per-block code.
#pragma once
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

template <class Agent>
__global__ void __launch_bounds__(Agent::kBlockThreads) dot_kernel(DotArgs a) {
  extern __shared__ __align__(16) float shared_query[];
  stage_query(a, shared_query);
  __syncthreads();
  Agent::run(a, shared_query);
}

}  // namespace distancies
