// Host-side sizing shared by the list-keeping stages (fused scan, 16-bit scan, warp select).
#pragma once
#include <algorithm>
#include <cstddef>

#include "harness/device.hpp"

namespace distancies {

// A persistent grid: enough blocks for `n` items at `per_block` each, at most `per_sm` per SM.
inline int persistent_blocks(long long n, long long per_block, int per_sm) {
  const long long needed = (n + per_block - 1) / per_block;
  const long long cap = static_cast<long long>(device_status().props.multiProcessorCount) * per_sm;
  return static_cast<int>(std::max(1LL, std::min(needed, cap)));
}

// Shared memory for `warps` sorted lists of k (similarity, row) plus their merge scratch.
inline std::size_t lists_bytes(int warps, int k) { return 2u * warps * k * (sizeof(float) + sizeof(int)); }

}  // namespace distancies
