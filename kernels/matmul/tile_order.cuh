// Which tile of C a block computes. Blocks numbered along a 1-D grid walk the tiles in groups
// of `group` tile rows, down the columns inside a group, so the blocks resident at one time
// share rows of A and columns of B in L2 (the grouped order of Triton's matmul tutorial).
#pragma once

namespace distancies {

struct TileCoord {
  int m, n;  // tile indices, not elements
};

// Tile number pid in that order (a persistent block walks several).
__device__ __forceinline__ TileCoord grouped_tile_at(int pid, int tiles_m, int tiles_n, int group) {
  const int per_group = group * tiles_n;
  const int first_m = (pid / per_group) * group;
  const int rows = min(tiles_m - first_m, group);
  const int in_group = pid % per_group;
  return {first_m + in_group % rows, in_group / rows};
}

__device__ __forceinline__ TileCoord grouped_tile(int tiles_m, int tiles_n, int group) {
  return grouped_tile_at(static_cast<int>(blockIdx.x), tiles_m, tiles_n, group);
}

}  // namespace distancies
