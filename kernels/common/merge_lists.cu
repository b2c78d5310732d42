#include "kernels/common/merge_lists.cuh"

namespace distancies {

namespace {
// Entries of `list` (k long, padding last) that rank before `x`: the padding never does, and the
// real entries are ordered, so the predicate is true on a prefix.
__device__ int ranked_before(const ListHit* list, int k, const ListHit& x) {
  int lo = 0, hi = k;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    const ListHit& e = list[mid];
    if (e.row >= 0 && ranks_before(e.sim, e.row, x.sim, x.row))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}
}  // namespace

__global__ void merge_lists_kernel(const ListHit* lists, int parts, int queries, int k, ListHit* out) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<long long>(parts) * queries * k) return;
  const int at = static_cast<int>(i % k);
  const long long list = i / k;
  const int part = static_cast<int>(list / queries), q = static_cast<int>(list % queries);
  const ListHit x = lists[i];
  if (x.row < 0) return;
  int place = at;
  for (int p = 0; p < parts && place < k; ++p)
    if (p != part) place += ranked_before(lists + (static_cast<long long>(p) * queries + q) * k, k, x);
  if (place < k) out[static_cast<long long>(q) * k + place] = x;
}

}  // namespace distancies
