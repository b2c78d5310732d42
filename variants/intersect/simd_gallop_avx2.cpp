// The galloping intersection with AVX2 block compares (4 x 8 ids against the id at once) and
// the 8-by-8 block merge with AVX2 all-pairs compares. This
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

// Every pair of a[0, 8) and b[0, 8): b rotated within its 128-bit halves (0-3 places), then
// with its halves swapped and rotated again: 8 compares cover all 64 pairs.
inline unsigned match8(const std::uint32_t* a, const std::uint32_t* b) {
  const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  const __m256i sw = _mm256_permute2x128_si256(vb, vb, 1);
  __m256i e = _mm256_or_si256(_mm256_cmpeq_epi32(va, vb), _mm256_cmpeq_epi32(va, sw));
  e = _mm256_or_si256(e, _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32(vb, 0x39)));
  e = _mm256_or_si256(e, _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32(vb, 0x4E)));
  e = _mm256_or_si256(e, _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32(vb, 0x93)));
  e = _mm256_or_si256(e, _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32(sw, 0x39)));
  e = _mm256_or_si256(e, _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32(sw, 0x4E)));
  e = _mm256_or_si256(e, _mm256_cmpeq_epi32(va, _mm256_shuffle_epi32(sw, 0x93)));
  return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(e)));
}

#include "variants/intersect/simd_gallop_kernel.hpp"

}  // namespace

std::size_t gallop_pair_avx2(const std::uint32_t* s, std::size_t n, const std::uint32_t* l, std::size_t m,
                             std::uint32_t* out) {
  return intersect_pair_impl(s, n, l, m, out);
}

}  // namespace distancies::intersect
