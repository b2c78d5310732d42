// The filtered scan's warpgroup-MMA walk (kernels/embeddings/wgmma_filter.cuh), host side: built
// only where CUTLASS's headers were found and only for sm_90a, so the rest of the scan asks here
// whether it can run before choosing it.
#pragma once
#include <cuda_runtime.h>

#include "kernels/embeddings/mma_filter_scan.cuh"
#include "kernels/embeddings/tiled_i8.cuh"

namespace distancies {

// Whether the walk can serve a launch of `f` on a device of compute capability major.minor:
// compiled in (CUTLASS present), a 9.0 device (sm_90a code runs there only), rows of at most 320
// columns.
bool filter_gemm_fits(int ldg, int major, int minor);
// A filter pass of `f` (thresholds set, counts zeroed) through the walk over every tile_stride-th
// 64-row tile of the model (1: the whole model); f.qgroups is set here.
void filter_gemm_scan(FilterScanArgs f, int tile_stride, cudaStream_t s);

// The int8 walk (wgmma_filter_i8.cuh) over the tiled int8 copy: whether it can run (rows of at
// most 384 columns, a 9.0 device), and a filter pass over the tiles tile_stride walks (TileWalk:
// 1 all of them). f.ldg and f.rows are the copy's; f.thresholds the fp16 passes' (x.seed_bound
// converts them); the candidates appended carry the copy's sorted rows and upper-bound keys, in
// segments of f.capacity / parts a block part (x.seg is set here; select_segments_kernel gathers
// them). Returns the parts (the same for every launch of one f).
bool filter_gemm_i8_fits(int ldg, int major, int minor);
int filter_gemm_scan_i8(FilterScanArgs f, I8FilterArgs& x, const void* codes, const void* query_codes, int tile_stride,
                        cudaStream_t s);

}  // namespace distancies
