// The synthetic model's values: a pure function of (seed, row, column), shared by the host
// writer (harness/synthetic.cpp) and the GPU generator (kernels/embeddings/synthetic_fill.cu), so both
// produce the same model bit for bit.
#pragma once
#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace distancies {

// splitmix64 finaliser: a good 64-bit mix of one integer.
DISTANCIES_HD inline std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Sum of four 16-bit uniforms, centred and halved: in [-1, 1], bell-shaped with sd ~0.29
// (GloVe's components are bell-shaped too, most within +-1).
DISTANCIES_HD inline float synthetic_value(std::uint64_t seed, std::int64_t row, int col) {
  std::uint64_t h = mix64(seed * 0x100000001B3ull ^ mix64(static_cast<std::uint64_t>(row) * 4099u + col));
  float s = float(h & 0xFFFF) + float((h >> 16) & 0xFFFF) + float((h >> 32) & 0xFFFF) + float(h >> 48);
  return (s / 65535.0f - 2.0f) * 0.5f;
}

}  // namespace distancies
