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

}  // namespace distancies
