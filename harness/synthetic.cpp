#include "harness/synthetic.hpp"

#include <algorithm>
#include <cstdio>

#include "harness/runtime/error.hpp"

namespace distancies {

const std::vector<std::string>& study_words() {
  static const std::vector<std::string> w = {"barca", "bottle", "key",  "king",  "man",
                                             "messi", "queen",  "ring", "snake", "woman"};
  return w;
}

std::vector<std::string> synthetic_vocabulary(std::int64_t rows) {
  const auto& base = study_words();
  if (rows < static_cast<std::int64_t>(base.size()))
    throw Error("a synthetic model needs at least " + std::to_string(base.size()) + " rows (the study's query words)");
  std::vector<std::string> words(base.begin(), base.end());
  words.reserve(static_cast<std::size_t>(rows));
  char buf[32];
  for (std::int64_t i = 0; static_cast<std::int64_t>(words.size()) < rows; ++i) {
    std::snprintf(buf, sizeof buf, "w%07lld", static_cast<long long>(i));
    words.emplace_back(buf);
  }
  std::sort(words.begin(), words.end());
  return words;
}

Model make_synthetic_model(std::int64_t rows, int dim, std::uint64_t seed) {
  if (dim <= 0) throw Error("dimension must be positive");
  Model m;
  m.allocate(rows, dim);
  m.words = synthetic_vocabulary(rows);
  for (std::int64_t r = 0; r < rows; ++r) {
    float* v = m.row(r);
    for (int c = 0; c < dim; ++c) v[c] = synthetic_value(seed, r, c);
    m.norms[static_cast<std::size_t>(r)] = vector_norm(v, dim);
  }
  m.format = "synthetic";
  return m;
}

}  // namespace distancies
