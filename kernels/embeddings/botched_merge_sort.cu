#include "kernels/common/launch.hpp"
#include "kernels/embeddings/botched_merge_sort.cuh"
#include "kernels/embeddings/dot_args.cuh"

namespace distancies {

__global__ void botched_merge_kernel(const float* in_s, const int* in_r, int chunks, int k, float* out_s, int* out_r) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= ceil_div(chunks, 2)) return;
  const long long a = 2ll * t * k, b = a + k, o = static_cast<long long>(t) * k;
  if (2 * t + 1 >= chunks) {  // odd chunk out: carried over unchanged
    for (int i = 0; i < k; ++i) {
      out_s[o + i] = in_s[a + i];
      out_r[o + i] = in_r[a + i];
    }
    return;
  }
  int i = 0, j = 0;
  for (int m = 0; m < k; ++m) {
    const bool take_a = ranks_before(in_s[a + i], in_r[a + i], in_s[b + j], in_r[b + j]);
    out_s[o + m] = take_a ? in_s[a + i] : in_s[b + j];
    out_r[o + m] = take_a ? in_r[a + i] : in_r[b + j];
    i += take_a;
    j += !take_a;
  }
}

}  // namespace distancies
