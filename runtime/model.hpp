// The in-memory embedding model: sorted vocabulary, per-row norms, row-major vectors.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/common/launch.hpp"

namespace distancies {

// 64-byte aligned float storage, so rows can be copied straight to the GPU and read with
// 16-byte vector loads.
class AlignedFloats {
 public:
  AlignedFloats() = default;
  explicit AlignedFloats(std::size_t count);  // zero-filled
  // Left unwritten, for a reader that writes every float (a native model's vector section):
  // filling 2.7 GB with zeros first costs as much as reading it.
  struct Uninitialized {};
  AlignedFloats(std::size_t count, Uninitialized);
  float* data() { return ptr_.get(); }
  const float* data() const { return ptr_.get(); }
  std::size_t size() const { return count_; }

 private:
  struct Free {
    void operator()(float* p) const;
  };
  std::unique_ptr<float, Free> ptr_;
  std::size_t count_ = 0;
};

// Floats between consecutive row starts: the dimension rounded up to 4 floats (16 bytes),
// padding zero-filled, so every row start is 16-byte aligned.
constexpr int leading_dim(int dim) { return round_up(dim, 4); }

struct Model {
  std::int64_t rows = 0;
  int dim = 0;
  int ld = 0;                      // leading_dim(dim)
  std::vector<std::string> words;  // sorted byte-wise (std::string operator<), unique
  std::vector<float> norms;  // Euclidean norm of each row (float32, computed in fp64): what every search divides by
  AlignedFloats vectors;     // rows * ld floats
  // Rows stored as unit vectors (the native format's `normalized` flag, docs/formats.md): they
  // are searched as they are, with `norms` recomputed from them (1 within rounding), and the
  // rows' norms before normalisation are kept in `original_norms` as data only.
  bool normalized = false;
  std::vector<float> original_norms;  // rows entries when normalized, else empty
  std::string format;                 // the format it was read from, for `info`

  const float* row(std::int64_t i) const { return vectors.data() + i * ld; }
  float* row(std::int64_t i) { return vectors.data() + i * ld; }

  // Binary search over the sorted vocabulary; -1 when absent.
  std::int64_t find(std::string_view word) const;

  // Allocates rows*ld floats (zeroed unless `zero` is false: the caller writes every float,
  // padding included) and sizes words/norms; sets ld.
  void allocate(std::int64_t rows_, int dim_, bool zero = true);
};

// fp64 norm of one vector, rounded to float.
float vector_norm(const float* v, int dim);

}  // namespace distancies
