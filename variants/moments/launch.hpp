// Host launches of the moments kernels (moments_launch.cu); the registry points at them.
#pragma once
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

void launch_two_pass_corrected(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_two_pass_uncorrected(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_two_pass_f64(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_one_pass(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_one_pass_shared_merge(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_one_pass_f64(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);
void launch_one_pass_colmajor(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);

}  // namespace distancies
