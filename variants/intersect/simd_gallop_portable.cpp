// The galloping intersection with a plain block compare (the compiler vectorises it with the
// baseline instruction set: SSE2 on x86-64): the path for hosts without AVX2.
#include <cstddef>
#include <cstdint>

namespace distancies::intersect {
namespace {

inline bool block_has(const std::uint32_t* p, std::uint32_t a);

#include "variants/intersect/simd_gallop_kernel.hpp"

inline bool block_has(const std::uint32_t* p, std::uint32_t a) {
  unsigned hit = 0;
  for (std::size_t i = 0; i < kBlock; ++i) hit |= p[i] == a;
  return hit != 0;
}

}  // namespace

std::size_t gallop_pair_portable(const std::uint32_t* s, std::size_t n, const std::uint32_t* l, std::size_t m,
                                 std::uint32_t* out) {
  return gallop_pair_impl(s, n, l, m, out);
}

}  // namespace distancies::intersect
