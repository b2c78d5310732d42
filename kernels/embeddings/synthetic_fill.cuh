// Generates the synthetic model (any data family) on the GPU, bit for bit the host's make_synthetic_model.
// Defined in kernels/embeddings/synthetic_fill.cu.
#pragma once
#include "kernels/embeddings/data_family.hpp"

namespace distancies {

// One thread per element of the rows x ld matrix; padding columns zero.
// Rows first_row .. first_row + rows - 1 of the model (a shard or a chunk of it), of the family.
__global__ void synthetic_fill_kernel(float* vectors, long long rows, int dim, int ld, unsigned long long seed,
                                      long long first_row, DataFamily family);

// One thread per row: fp64 norms in the host's order (vector_norm()).
__global__ void row_norms_kernel(const float* vectors, long long rows, int dim, int ld, float* norms);

}  // namespace distancies
