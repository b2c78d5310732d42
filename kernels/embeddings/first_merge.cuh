// Study top-k stage 1, FirstMerge: one thread per chunk of k; insertion-sorts its chunk in
// place (values with indices) and pads a short last chunk with sentinels so every chunk
// holds exactly k sorted entries. Defined in kernels/embeddings/first_merge.cu.
#pragma once

namespace distancies {

__global__ void first_merge_kernel(float* sims, int* idx, int n, int k);

}  // namespace distancies
