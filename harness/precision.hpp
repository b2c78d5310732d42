// The bound that lets a 16-bit scan stand in for the fp32 one (docs/variants.md derives it).
#pragma once
#include "kernels/storage.hpp"

namespace distancies {

// Largest possible |similarity from the 16-bit copy - similarity from the fp32 scan| for any
// row with a non-zero norm >= min_norm, for this query. Zero-norm rows score 0 on both paths.
float reduced_error_bound(Storage s, int dim, const float* query, float query_norm, float min_norm);

// Largest possible |approximate cosine from a batched GEMM tile - cosine from the fp32 scan|,
// for any query (normalised on the GPU) and any row of norm >= min_norm (docs/batch.md);
// `scores` F16: the tile's scores are rounded to fp16 before the selection reads them.
float gemm_error_bound(GemmInput g, int dim, float min_norm, Storage scores = Storage::F32);

}  // namespace distancies
