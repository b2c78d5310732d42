// Host-side sizing shared by the list-keeping stages (fused scan, 16-bit scan, warp select).
// Grid sizes and the shared-memory opt-in are runtime/launch.hpp's.
#pragma once
#include <cstddef>

#include "runtime/launch.hpp"

namespace distancies {

// Shared memory for `warps` sorted lists of k (similarity, row) plus their merge scratch
// (carve_block_lists, kernels/common/warp_merge.cuh).
inline std::size_t lists_bytes(int warps, int k) { return 2u * warps * k * (sizeof(float) + sizeof(int)); }

}  // namespace distancies
