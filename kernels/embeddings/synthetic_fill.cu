#include "kernels/common/launch.hpp"
#include "kernels/embeddings/data_family.hpp"
#include "kernels/embeddings/synthetic_fill.cuh"

namespace distancies {

__global__ void synthetic_fill_kernel(float* vectors, long long rows, int dim, int ld, unsigned long long seed,
                                      long long first_row, DataFamily family) {
  const long long i = global_thread_index();
  if (i >= rows * ld) return;
  const long long row = i / ld;
  const int col = static_cast<int>(i % ld);
  vectors[i] = col < dim ? family_value(family, seed, first_row + row, col) : 0.0f;
}

// Explicit _rn intrinsics stop FMA contraction so the result matches vector_norm() exactly.
__global__ void row_norms_kernel(const float* vectors, long long rows, int dim, int ld, float* norms) {
  const long long row = global_thread_index();
  if (row >= rows) return;
  const float* v = vectors + row * ld;
  double s = 0.0;
  for (int j = 0; j < dim; ++j) s = __dadd_rn(s, __dmul_rn(double(v[j]), double(v[j])));
  norms[row] = static_cast<float>(sqrt(s));
}

}  // namespace distancies
