// The synthetic data families (docs/data.md): each value a pure function of (family, seed, row,
// column), shared by the host writer (harness/synthetic.cpp) and the GPU generator
// (synthetic_fill.cu), so both make the same model bit for bit. Real embeddings are
// anisotropic, clustered and heavy-tailed; i.i.d. noise alone hides what that does to the
// reduced copies' bounds. Arithmetic goes through the _rn helpers below so that nvcc cannot
// contract it into FMAs the host does not have.
#pragma once
#include <cstdint>

#include "kernels/common/host_device.hpp"
#include "kernels/embeddings/synthetic_value.hpp"

namespace distancies {

enum class FamilyKind : int {
  Iid = 0,          // synthetic_value() alone
  Anisotropic = 1,  // one common direction: x = a u + z, mean pairwise cosine ~ a^2 / (a^2 + D sd^2)
  Directions = 2,   // four common directions of energy 8:4:2:1, each row's weights varying +-50 %
  Clustered = 3,    // Zipf-sized clusters around centroids, near-duplicates and exact duplicates
  HeavyTailed = 4,  // i.i.d. directions, row norms spread over 2^-8 .. 2^8 (log-normal-like)
};

// Plain data, passed to kernels by value; every float is worked out once on the host.
struct DataFamily {
  FamilyKind kind = FamilyKind::Iid;
  float cosine = 0;        // Anisotropic / Directions: the target mean pairwise cosine
  float amplitude = 0;     // Anisotropic: a; Directions: the first direction's a (then a/sqrt2, a/2, a/(2 sqrt2))
  float unit = 0;          // 1/sqrt(dim): the common directions' coordinates are +-unit
  int cluster_levels = 0;  // Clustered: level L holds 2^L clusters, each level equally likely
};

constexpr float kSyntheticSd = 0.28867513f;  // synthetic_value()'s standard deviation, 1/sqrt(12)
constexpr int kFamilyDirections = 4;
constexpr std::uint64_t kNearDuplicatePerMille = 20;   // Clustered: rows that copy another row plus 1 % noise
constexpr std::uint64_t kExactDuplicatePerMille = 10;  // Clustered: rows that copy another row exactly

DISTANCIES_HD inline float family_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

DISTANCIES_HD inline float family_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// A salted stream of the same generator, so that each ingredient is independent of the others.
DISTANCIES_HD inline float family_noise(std::uint64_t seed, std::uint64_t salt, std::int64_t row, int col) {
  return synthetic_value(seed ^ (salt * 0xD6E8FEB86659FD93ull), row, col);
}

// +-unit with a sign that is a function of (seed, direction, column): a unit vector exactly.
DISTANCIES_HD inline float family_direction(const DataFamily& f, std::uint64_t seed, int direction, int col) {
  const std::uint64_t h = mix64(seed * 31u + 0xA5A5u + static_cast<std::uint64_t>(direction) * 0x10001u +
                                (static_cast<std::uint64_t>(col) << 20));
  return (h & 1u) ? f.unit : -f.unit;
}

DISTANCIES_HD inline float anisotropic_value(const DataFamily& f, std::uint64_t seed, std::int64_t row, int col) {
  return family_add(family_mul(f.amplitude, family_direction(f, seed, 0, col)), synthetic_value(seed, row, col));
}

DISTANCIES_HD inline float directions_value(const DataFamily& f, std::uint64_t seed, std::int64_t row, int col) {
  // Each row's weight on direction j: a_j (1 + 0.5 g / sd), g a per-row bell-shaped draw.
  constexpr float kEnergy[kFamilyDirections] = {1.0f, 0.70710678f, 0.5f, 0.35355339f};
  float x = synthetic_value(seed, row, col);
  for (int j = 0; j < kFamilyDirections; ++j) {
    const float g = family_mul(family_noise(seed, 7, row, j), 0.5f / kSyntheticSd);
    const float w = family_mul(family_mul(f.amplitude, kEnergy[j]), family_add(1.0f, g));
    x = family_add(x, family_mul(w, family_direction(f, seed, j, col)));
  }
  return x;
}

// Cluster of a row: a level L uniform in [0, levels), then one of that level's 2^L clusters, so
// a cluster's share falls as 1 / its rank (Zipf, exponent 1) with integer arithmetic only.
DISTANCIES_HD inline std::int64_t family_cluster(const DataFamily& f, std::uint64_t seed, std::int64_t row) {
  const std::uint64_t h = mix64(seed * 0x9E37u + 0xC1u + static_cast<std::uint64_t>(row) * 0x2545F4914F6CDD1Dull);
  const int level = static_cast<int>((h & 0xFFFFu) % static_cast<std::uint64_t>(f.cluster_levels));
  const std::uint64_t within = (h >> 16) & ((std::uint64_t{1} << level) - 1u);
  return static_cast<std::int64_t>((std::uint64_t{1} << level) - 1u + within);
}

DISTANCIES_HD inline float clustered_base(const DataFamily& f, std::uint64_t seed, std::int64_t row, int col) {
  const float centroid = family_noise(seed, 11, family_cluster(f, seed, row), col);
  return family_add(centroid, family_mul(0.5f, synthetic_value(seed, row, col)));
}

DISTANCIES_HD inline float clustered_value(const DataFamily& f, std::uint64_t seed, std::int64_t row, int col) {
  const std::uint64_t h = mix64(seed * 0x51u + 0x77u + static_cast<std::uint64_t>(row) * 0x9E3779B97F4A7C15ull);
  const std::uint64_t pick = h % 1000u;
  if (pick >= kNearDuplicatePerMille + kExactDuplicatePerMille || row == 0) return clustered_base(f, seed, row, col);
  // A copy of one of the 4,096 rows before it (so a shard or chunk needs no total row count);
  // the copied row's own base value, so no chains.
  const std::uint64_t back = (h >> 10) % static_cast<std::uint64_t>(row < 4096 ? row : 4096);
  const float base = clustered_base(f, seed, row - 1 - static_cast<std::int64_t>(back), col);
  if (pick >= kNearDuplicatePerMille) return base;
  return family_add(base, family_mul(0.01f, family_noise(seed, 13, row, col)));
}

// A per-row scale 2^e (1 + m/256), e a bell-shaped integer in [-8, 8]: exact on host and GPU.
DISTANCIES_HD inline float heavy_tailed_value(std::uint64_t seed, std::int64_t row, int col) {
  const std::uint64_t h = mix64(seed * 0x3Bu + 0x5Eu + static_cast<std::uint64_t>(row) * 0xBF58476D1CE4E5B9ull);
  int e = -8;
  for (int i = 0; i < 16; ++i) e += static_cast<int>((h >> i) & 1u);  // binomial(16, 1/2) - 8
  const float mantissa = 1.0f + static_cast<float>((h >> 16) & 0xFFu) / 256.0f;
  float scale = mantissa;
  for (int i = 0; i < (e < 0 ? -e : e); ++i) scale = e < 0 ? scale * 0.5f : scale * 2.0f;
  return family_mul(scale, synthetic_value(seed, row, col));
}

DISTANCIES_HD inline float family_value(const DataFamily& f, std::uint64_t seed, std::int64_t row, int col) {
  switch (f.kind) {
    case FamilyKind::Anisotropic:
      return anisotropic_value(f, seed, row, col);
    case FamilyKind::Directions:
      return directions_value(f, seed, row, col);
    case FamilyKind::Clustered:
      return clustered_value(f, seed, row, col);
    case FamilyKind::HeavyTailed:
      return heavy_tailed_value(seed, row, col);
    case FamilyKind::Iid:
    default:
      return synthetic_value(seed, row, col);
  }
}

}  // namespace distancies
