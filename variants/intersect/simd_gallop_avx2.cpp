// The galloping intersection with AVX2 block compares (4 x 8 ids against the id at once). This
// file alone is built with -mavx2; cpu_peers.cpp calls it only where the CPU has AVX2.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace distancies::intersect {
namespace {

inline bool block_has(const std::uint32_t* p, std::uint32_t a) {
  const __m256i k = _mm256_set1_epi32(static_cast<int>(a));
  const __m256i* v = reinterpret_cast<const __m256i*>(p);
  const __m256i e0 = _mm256_cmpeq_epi32(_mm256_loadu_si256(v), k);
  const __m256i e1 = _mm256_cmpeq_epi32(_mm256_loadu_si256(v + 1), k);
  const __m256i e2 = _mm256_cmpeq_epi32(_mm256_loadu_si256(v + 2), k);
  const __m256i e3 = _mm256_cmpeq_epi32(_mm256_loadu_si256(v + 3), k);
  const __m256i e = _mm256_or_si256(_mm256_or_si256(e0, e1), _mm256_or_si256(e2, e3));
  return !_mm256_testz_si256(e, e);
}

#include "variants/intersect/simd_gallop_kernel.hpp"

}  // namespace

std::size_t gallop_pair_avx2(const std::uint32_t* s, std::size_t n, const std::uint32_t* l, std::size_t m,
                             std::uint32_t* out) {
  return gallop_pair_impl(s, n, l, m, out);
}

}  // namespace distancies::intersect
