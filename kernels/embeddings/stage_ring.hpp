// A place in a ring of S shared-memory stages that a producer fills in order and consumers empty
// (the filtered scan's wgmma walk, wgmma_filter.cuh): item i is in stage i % S at its (i / S)-th
// turn, whose parity the stage's barriers' waits name. Kept as a running pair, advanced by the
// items passed over: the 64-bit division it replaces sat between a warpgroup's MMA batches.
// Shared with the host, where tests/test_stage_ring.cpp replays the walk's item sequences.
#pragma once
#include "kernels/common/host_device.hpp"

namespace distancies {

struct StageRing {
  int stage = 0;
  unsigned phase = 0;
  // n items on (any n >= 0; the walk passes 1 or a tile's column blocks, fewer than 2 S).
  DISTANCIES_HD void advance(int n, int S) {
    for (stage += n; stage >= S; stage -= S) phase ^= 1u;
  }
};

// Which of a model's 64-row tiles a pass of the walk takes: every stride-th (tiles 0, stride,
// 2 stride, ...), or, with rest, the others (1, 2, ..., stride - 1, stride + 1, ...), so that two
// passes split the model between them (the filter pass in two parts, thresholds raised between).
// 32-bit arithmetic: a tile index fits (rows are an int), and it runs once a tile.
struct TileWalk {
  int stride = 1;
  bool rest = false;  // needs stride >= 2
  // Tiles walked of `all`.
  DISTANCIES_HD long long count(long long all) const {
    const long long every = (all + stride - 1) / stride;
    return rest ? all - every : every;
  }
  // The v-th tile walked.
  DISTANCIES_HD long long tile(long long v) const {
    const unsigned u = static_cast<unsigned>(v), s = static_cast<unsigned>(stride);
    return rest ? static_cast<long long>(u / (s - 1) * s + u % (s - 1) + 1) : static_cast<long long>(u) * s;
  }
};

}  // namespace distancies
