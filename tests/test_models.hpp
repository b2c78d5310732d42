// Small models for the tests: random, with the nasty cases on request.
#pragma once
#include <cstdio>
#include <random>
#include <string>

#include "runtime/model.hpp"

namespace distancies::testing {

struct ModelSpec {
  std::int64_t rows = 1000;
  int dim = 300;
  std::uint32_t seed = 1;
  int zero_rows = 0;       // rows 3, 3+7, ... set to zero
  int duplicate_of_0 = 0;  // rows copied from row 0 (exact ties)
};

inline Model random_model(const ModelSpec& s) {
  Model m;
  m.allocate(s.rows, s.dim);
  std::mt19937 rng(s.seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  char name[32];
  for (std::int64_t r = 0; r < s.rows; ++r) {
    std::snprintf(name, sizeof name, "r%08lld", static_cast<long long>(r));
    m.words[static_cast<std::size_t>(r)] = name;
    for (int j = 0; j < s.dim; ++j) m.row(r)[j] = u(rng);
  }
  for (int z = 0; z < s.zero_rows && 3 + 7ll * z < s.rows; ++z)
    for (int j = 0; j < s.dim; ++j) m.row(3 + 7ll * z)[j] = 0.0f;
  for (int d = 1; d <= s.duplicate_of_0 && d * 13ll < s.rows; ++d)
    for (int j = 0; j < s.dim; ++j) m.row(d * 13ll)[j] = m.row(0)[j];
  for (std::int64_t r = 0; r < s.rows; ++r) m.norms[static_cast<std::size_t>(r)] = vector_norm(m.row(r), s.dim);
  m.format = "test";
  return m;
}

// A fresh seed per run, printed by the test on failure.
inline std::uint32_t fresh_seed() { return std::random_device{}(); }

inline std::vector<float> random_query(int dim, std::uint32_t seed) {
  std::mt19937 rng(seed ^ 0x5bd1e995u);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> q(static_cast<std::size_t>(dim));
  for (float& x : q) x = u(rng);
  return q;
}

}  // namespace distancies::testing
