#include "kernels/common/launch.hpp"
#include "kernels/embeddings/dot_args.cuh"
#include "kernels/embeddings/first_merge.cuh"

namespace distancies {

__global__ void first_merge_kernel(float* sims, int* idx, int n, int k) {
  const long long chunk = global_thread_index();
  const long long start = chunk * k;
  if (start >= n) return;
  const int len = static_cast<int>(min(static_cast<long long>(k), n - start));
  float* s = sims + start;
  int* r = idx + start;
  for (int i = 1; i < len; ++i) {
    const float sv = s[i];
    const int rv = r[i];
    int j = i - 1;
    while (j >= 0 && ranks_before(sv, rv, s[j], r[j])) {
      s[j + 1] = s[j];
      r[j + 1] = r[j];
      --j;
    }
    s[j + 1] = sv;
    r[j + 1] = rv;
  }
  for (int i = len; i < k; ++i) {
    s[i] = kSentinelSim;
    r[i] = kSentinelRow;
  }
}

}  // namespace distancies
