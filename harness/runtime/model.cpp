#include "harness/runtime/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

namespace distancies {

void AlignedFloats::Free::operator()(float* p) const { std::free(p); }

AlignedFloats::AlignedFloats(std::size_t count) : count_(count) {
  std::size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  if (bytes == 0) bytes = 64;
  void* p = std::aligned_alloc(64, bytes);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  ptr_.reset(static_cast<float*>(p));
}

std::int64_t Model::find(std::string_view word) const {
  auto it = std::lower_bound(words.begin(), words.end(), word,
                             [](const std::string& a, std::string_view b) { return std::string_view(a) < b; });
  if (it == words.end() || std::string_view(*it) != word) return -1;
  return it - words.begin();
}

void Model::allocate(std::int64_t rows_, int dim_) {
  rows = rows_;
  dim = dim_;
  ld = leading_dim(dim_);
  words.assign(static_cast<std::size_t>(rows_), std::string());
  norms.assign(static_cast<std::size_t>(rows_), 0.0f);
  vectors = AlignedFloats(static_cast<std::size_t>(rows_) * static_cast<std::size_t>(ld));
}

float vector_norm(const float* v, int dim) {
  double s = 0;
  for (int j = 0; j < dim; ++j) s += double(v[j]) * double(v[j]);
  return static_cast<float>(std::sqrt(s));
}

}  // namespace distancies
