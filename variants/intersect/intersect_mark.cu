// The marking kernels' instantiations, one launcher per (method, grain).
#include <algorithm>

#include "kernels/intersect/coarse_mark.cuh"
#include "kernels/intersect/fine_mark.cuh"
#include "kernels/intersect/merge_path_mark.cuh"
#include "kernels/intersect/packed_probe_mark.cuh"
#include "kernels/intersect/probe_mark.cuh"
#include "kernels/intersect/resident_serve.cuh"
#include "kernels/intersect/staged_mark.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/env_setting.hpp"
#include "runtime/error.hpp"
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

namespace {
constexpr int kProbeThreads = kIntersectTile / 4;
struct ProbeTile {
  __device__ void operator()(const IntersectArgs& a, int t) const { probe_tile<kProbeThreads, 4>(a, t); }
};
struct PackedProbeTile {
  __device__ void operator()(const IntersectArgs& a, int t) const { packed_probe_tile<kProbeThreads, 4>(a, t); }
};

// The resident kernel's grid: every block resident at once (a cooperative launch refuses more),
// DISTANCIES_RESIDENT_BLOCKS_PER_SM of them an SM (default 2: a query of many tiles gets more
// blocks, and each block's poll of the doorbell is one more read over the bus).
template <class Tile>
int launch_resident(const IntersectArgs& a, ServeBell* bell, cudaStream_t s) {
  const void* kernel = reinterpret_cast<const void*>(&resident_serve_kernel<kProbeThreads, Tile>);
  int dev = 0, sms = 0, coop = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
  if (!coop) throw Error("this GPU cannot launch the resident intersection kernel (no cooperative launch)");
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kProbeThreads, 0));
  const int want = env_count("DISTANCIES_RESIDENT_BLOCKS_PER_SM", 1, 32, 2);
  const int blocks = std::min({want * sms, per_sm * sms, kServeMaxBlocks});
  if (blocks < 1) throw Error("the resident intersection kernel does not fit on an SM");
  IntersectArgs args = a;
  Tile tile;
  void* params[] = {&args, &bell, &tile};
  CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, blocks, kProbeThreads, params, 0, s));
  CUDA_CHECK(cudaGetLastError());
  return blocks;
}
}  // namespace

int launch_probe_resident(const IntersectArgs& a, ServeBell* bell, cudaStream_t s) {
  return launch_resident<ProbeTile>(a, bell, s);
}
int launch_packed_probe_resident(const IntersectArgs& a, ServeBell* bell, cudaStream_t s) {
  return launch_resident<PackedProbeTile>(a, bell, s);
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
