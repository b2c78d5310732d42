// The marking kernels' instantiations, one launcher per (method, grain).
#include "kernels/intersect/coarse_mark.cuh"
#include "kernels/intersect/fine_mark.cuh"
#include "kernels/intersect/merge_path_mark.cuh"
#include "kernels/intersect/packed_probe_mark.cuh"
#include "kernels/intersect/probe_mark.cuh"
#include "kernels/intersect/staged_mark.cuh"
#include "runtime/cuda_check.hpp"
#include "variants/intersect/intersect_registry.hpp"

namespace distancies {

static_assert(kIntersectMaxTerms == intersect::kMaxTerms, "kernels and readers agree on the terms per query");
static_assert(kIntersectBuckets == intersect::kHashBuckets, "kernels and the CPU Hash agree on the buckets");

template <IntersectMethod M>
void launch_coarse_mark(const IntersectArgs& a, int ntiles, cudaStream_t s) {
  if (ntiles <= 0) return;
  coarse_mark_kernel<M, 128, kIntersectTile / 128><<<ntiles, 128, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

template <IntersectMethod M>
void launch_fine_mark(const IntersectArgs& a, int ntiles, cudaStream_t s) {
  if (ntiles <= 0) return;
  fine_mark_kernel<M, 128><<<ntiles, 128, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

void launch_merge_path_mark(const IntersectArgs& a, int ntiles, cudaStream_t s) {
  if (ntiles <= 0) return;
  merge_path_mark_kernel<128, kIntersectTile / 128><<<ntiles, 128, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

void launch_staged_mark(const IntersectArgs& a, int ntiles, cudaStream_t s) {
  if (ntiles <= 0) return;
  // 4,096-id windows (16 KiB of shared memory); windows over 64 Ki ids are galloped through.
  staged_mark_kernel<128, kIntersectTile / 128, 4096, 65536><<<ntiles, 128, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

void launch_probe_mark(const IntersectArgs& a, int ntiles, cudaStream_t s) {
  if (ntiles <= 0) return;
  // 4 ids a thread, 256 threads: on the H100 as fast as 2 ids x 512 and twice as fast as 1 x 1,024
  // (docs/intersection.md).
  probe_mark_kernel<kIntersectTile / 4, 4><<<ntiles, kIntersectTile / 4, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

void launch_packed_probe_mark(const IntersectArgs& a, int ntiles, cudaStream_t s) {
  if (ntiles <= 0) return;
  packed_probe_mark_kernel<kIntersectTile / 4, 4><<<ntiles, kIntersectTile / 4, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

template void launch_coarse_mark<IntersectMethod::Svs>(const IntersectArgs&, int, cudaStream_t);
template void launch_coarse_mark<IntersectMethod::Adp>(const IntersectArgs&, int, cudaStream_t);
template void launch_coarse_mark<IntersectMethod::Hash>(const IntersectArgs&, int, cudaStream_t);
template void launch_coarse_mark<IntersectMethod::Gallop>(const IntersectArgs&, int, cudaStream_t);
template void launch_coarse_mark<IntersectMethod::Bitmap>(const IntersectArgs&, int, cudaStream_t);
template void launch_fine_mark<IntersectMethod::Svs>(const IntersectArgs&, int, cudaStream_t);
template void launch_fine_mark<IntersectMethod::Adp>(const IntersectArgs&, int, cudaStream_t);
template void launch_fine_mark<IntersectMethod::Hash>(const IntersectArgs&, int, cudaStream_t);

}  // namespace distancies
