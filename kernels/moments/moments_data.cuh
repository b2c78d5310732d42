// The benchmark's matrix, element by element from a hash of its flat row-major index, so the
// GPU fill, the CPU tests and the Python peers (scripts/peers/peer_moments.py) make the same floats.
// x = u * u with u uniform in [0, 1) on a 2^-24 grid: skewed (g1 ~ 0.64) and not normal
// (g2 ~ -0.86), so no statistic sits at zero where a relative error means nothing.
#pragma once
#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace distancies {

DISTANCIES_HD inline std::uint64_t splitmix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Element (r, c) of the rows x cols benchmark matrix for `seed`. One rounding (the product),
// the same on every IEEE machine.
DISTANCIES_HD inline float moments_element(std::uint64_t seed, std::uint64_t r, std::uint64_t c, std::uint64_t cols) {
  const std::uint64_t h = splitmix64((seed << 40) + r * cols + c);
  const float u = float(h >> 40) * (1.0f / 16777216.0f);  // exact: 24 bits times a power of two
#if defined(__CUDA_ARCH__)
  return __fmul_rn(u, u);
#else
  return u * u;
#endif
}

}  // namespace distancies
