// CUB's stable descending radix sort of every candidate: the cub_radix_sort stage, and the exact
// fallback of stages whose shared-memory lists stop at k = 128.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "variants/embeddings/registry.hpp"

namespace distancies {

std::size_t cub_sort_temp_bytes(int n);

// Sorts state.sims/idx (n entries) into the alternate buffers and swaps them: the best k first.
void cub_sort_all(TopkState& s, cudaStream_t stream);

}  // namespace distancies
