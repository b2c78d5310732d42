#include "runtime/model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/mman.h>

namespace distancies {

void AlignedFloats::Free::operator()(float* p) const { std::free(p); }

namespace {

// 64-byte aligned; large buffers 2 MiB aligned and offered transparent huge pages, so the
// first touch of a multi-GB model takes one fault per 2 MiB rather than per 4 KiB.
float* aligned_floats(std::size_t count) {
  constexpr std::size_t kHuge = 2u << 20;
  std::size_t bytes = (count * sizeof(float) + 63) / 64 * 64;
  if (bytes == 0) bytes = 64;
  const bool huge = bytes >= 4 * kHuge;
  if (huge) bytes = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(huge ? kHuge : 64, bytes);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (huge) ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: ignored where THP is off
#endif
  return static_cast<float*>(p);
}

}  // namespace

AlignedFloats::AlignedFloats(std::size_t count) : count_(count) {
  ptr_.reset(aligned_floats(count));
  std::memset(ptr_.get(), 0, (count * sizeof(float) + 63) / 64 * 64);
}

AlignedFloats::AlignedFloats(std::size_t count, Uninitialized) : count_(count) { ptr_.reset(aligned_floats(count)); }

std::int64_t Model::find(std::string_view word) const {
  auto it = std::lower_bound(words.begin(), words.end(), word,
                             [](const std::string& a, std::string_view b) { return std::string_view(a) < b; });
  if (it == words.end() || std::string_view(*it) != word) return -1;
  return it - words.begin();
}

void Model::allocate(std::int64_t rows_, int dim_, bool zero) {
  rows = rows_;
  dim = dim_;
  ld = leading_dim(dim_);
  words.assign(static_cast<std::size_t>(rows_), std::string());
  norms.assign(static_cast<std::size_t>(rows_), 0.0f);
  const std::size_t count = static_cast<std::size_t>(rows_) * static_cast<std::size_t>(ld);
  vectors = zero ? AlignedFloats(count) : AlignedFloats(count, AlignedFloats::Uninitialized{});
}

float vector_norm(const float* v, int dim) {
  double s = 0;
  for (int j = 0; j < dim; ++j) s += double(v[j]) * double(v[j]);
  return static_cast<float>(std::sqrt(s));
}

}  // namespace distancies
