// Host launches of the moments kernels (moments_launch.cu); the registry points at them.
#pragma once
#include <cstddef>

#include "variants/moments/registry.hpp"

namespace distancies {

// Launch geometry for one matrix (docs/moments.md, "Geometry"): a tile of `width` columns
// per block with `slots` threads per column; grid tiles x groups.
struct MomentsGeometry {
  int threads = 0;
  int width = 0;
  int slots = 0;
  int tiles = 0;   // blocks along the columns
  int groups = 0;  // blocks along the rows
};

MomentsGeometry moments_geometry(long long rows, int cols, MatrixLayout layout);

// one_pass_staged's chunks (docs/moments.md, "Staged rows"): chunk_rows 0 where the matrix has
// more than one column tile, columns or leading dimension not a multiple of 4, a base not 16-byte
// aligned, a device before sm_90, or a ring over 160 KB; that shape takes one_pass's kernel.
struct StagedPlan {
  int chunk_rows = 0;  // a multiple of the geometry's slots, about chunk_bytes a chunk
  std::size_t ring_bytes = 0;
};
StagedPlan moments_staged_plan(const MomentsInput& in, const MomentsGeometry& g, int ring, long long chunk_bytes);

void launch_two_pass_corrected(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_two_pass_uncorrected(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_two_pass_f64(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_one_pass(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_one_pass_staged(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_one_pass_shared_merge(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_one_pass_f64(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_one_pass_colmajor(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);

}  // namespace distancies
