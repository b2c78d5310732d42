// The galloping intersection and the block merge with plain compares (the compiler vectorises
// them with the baseline instruction set: SSE2 on x86-64): the path for hosts without AVX2.
#include <cstddef>
#include <cstdint>

namespace distancies::intersect {
namespace {

inline bool block_has(const std::uint32_t* p, std::uint32_t a);
inline unsigned match8(const std::uint32_t* a, const std::uint32_t* b);

#include "variants/intersect/simd_gallop_kernel.hpp"

inline bool block_has(const std::uint32_t* p, std::uint32_t a) {
  unsigned hit = 0;
  for (std::size_t i = 0; i < kBlock; ++i) hit |= p[i] == a;
  return hit != 0;
}

inline unsigned match8(const std::uint32_t* a, const std::uint32_t* b) {
  unsigned hit = 0;
  for (int t = 0; t < 8; ++t) {
    unsigned eq = 0;
    for (int u = 0; u < 8; ++u) eq |= a[t] == b[u];
    hit |= eq << t;
  }
  return hit;
}

}  // namespace

std::size_t gallop_pair_portable(const std::uint32_t* s, std::size_t n, const std::uint32_t* l, std::size_t m,
                                 std::uint32_t* out) {
  return intersect_pair_impl(s, n, l, m, out);
}

}  // namespace distancies::intersect
