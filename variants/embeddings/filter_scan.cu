// The filtered mma batch scan, host side: query tiles a block, the sample that seeds the
// thresholds, each query's candidate buffer, and the launches (sample, seed, filter, select).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "harness/runtime/launch.hpp"
#include "kernels/embeddings/mma_filter_scan.cuh"
#include "variants/embeddings/batch_scan.hpp"

namespace distancies {
namespace {

using Policy = policy::Active::FilterScan;
static_assert(Policy::kWarps == filter_scan::kWarps, "the kernel's warps are the policy's");

int chunks_of(int dim) { return ceil_div(reduced_leading_dim(dim), 32); }
std::size_t tile_smem(int dim) { return static_cast<std::size_t>(chunks_of(dim)) * 32 * sizeof(uint4); }

// The most tiles a block takes: the policy's, or DISTANCIES_FILTER_TILES (1, 2, 4, 8 or 16) to
// measure the others without a rebuild (registers grow with the tiles: 16 leave one block an SM).
int max_tiles() {
  static const int most = [] {
    const char* env = std::getenv("DISTANCIES_FILTER_TILES");
    if (env == nullptr) return Policy::kMaxTiles;
    const std::string v(env);
    for (int t : {1, 2, 4, 8, 16})
      if (v == std::to_string(t)) return t;
    throw Error("DISTANCIES_FILTER_TILES must be 1, 2, 4, 8 or 16, not '" + v + "'");
  }();
  return most;
}

// Tiles of 8 queries a block: enough for the batch (a power of two), as many as fit.
int tiles_for(int batch, int dim) {
  int tiles = 1;
  while (tiles < max_tiles() && 8 * tiles < batch) tiles *= 2;
  while (tiles > 1 && tiles * tile_smem(dim) > Policy::kMaxQuerySmem) tiles /= 2;
  return tiles;
}

using Kernel = void (*)(FilterScanArgs);

template <bool kSample>
Kernel kernel_of(int tiles) {
  switch (tiles) {
    case 1: return mma_filter_scan_kernel<1, 2, kSample>;
    case 2: return mma_filter_scan_kernel<2, 2, kSample>;
    case 4: return mma_filter_scan_kernel<4, 2, kSample>;
    case 8: return mma_filter_scan_kernel<8, 1, kSample>;
    default: return mma_filter_scan_kernel<16, 1, kSample>;
  }
}
static_assert(Policy::kPairedTiles == 4 && Policy::kMaxTiles == 16, "kernel_of's table follows the policy");

// The sample: `groups` 16-row groups spread evenly (every stride-th), none if not worth it.
struct Sample {
  long long groups = 0, stride = 0;
};
Sample sample_for(long long rows, int K) {
  const long long want = std::max<long long>(ceil_div(static_cast<long long>(K), 16ll),
                                             static_cast<long long>(std::ceil(std::sqrt(double(K) * double(rows)) / 16)));
  if (rows < Policy::kSeedRatio * want * 16) return {};
  return {want, rows / 16 / want};
}

// Blocks of `kernel` an SM runs with `smem` bytes each, asked once per kernel, size and device.
// The kernel's shared-memory allowance is set before every launch all the same: it is one value
// per kernel, and a launch with less may have lowered it since.
int blocks_per_sm(Kernel kernel, std::size_t smem) {
  static std::mutex m;
  static std::map<std::tuple<Kernel, std::size_t, int>, int> known;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  allow_dynamic_smem(kernel, smem, "mma_filter_scan_kernel");
  const std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_tuple(kernel, smem, device);
  if (auto it = known.find(key); it != known.end()) return it->second;
  int fit = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, Policy::kWarps * 32, smem));
  if (fit < 1) throw Error("mma_filter_scan_kernel cannot run a block with " + std::to_string(smem) + " bytes of shared memory");
  return known[key] = fit;
}

// A launch of `kernel`: as many blocks as the GPU holds at once, a multiple of the query groups.
void launch_scan(Kernel kernel, FilterScanArgs f, std::size_t smem, cudaStream_t s) {
  const int fit = blocks_per_sm(kernel, smem);
  const int parts = std::max(1, device_status().props.multiProcessorCount * fit / f.qgroups);
  kernel<<<parts * f.qgroups, Policy::kWarps * 32, smem, s>>>(f);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

std::string filter_scan_refusal(int dim) {
  if (tile_smem(dim) <= Policy::kMaxQuerySmem) return {};
  return "a " + std::to_string(dim) + "-dimensional model's query fragments do not fit the filtered scan's shared memory";
}

bool filter_scan_seeds(long long rows, int K) { return sample_for(rows, K).groups > 0; }

long long filter_scan_capacity(long long rows, int K) {
  const Sample sm = sample_for(rows, K);
  if (sm.groups == 0) return std::max(rows, 1ll);  // no threshold: every row is a candidate
  const long long sampled = sm.groups * 16;
  const long long expected = ceil_div(static_cast<long long>(K) * rows, sampled);
  return std::min(rows, std::max(sampled, Policy::kCapacityFactor * expected + 1024));
}

int filter_scan_max_queries() { return Policy::kMaxQueries; }
int filter_scan_queries(int batch) { return std::min(batch, filter_scan_max_queries()); }

void filter_scan_tiles(const BatchScanArgs& a, cudaStream_t s) {
  if (a.batch == 0) return;
  if (a.input != GemmInput::F16) throw Error("the filtered scan reads the fp16 copy");
  const std::string why = filter_scan_refusal(a.exact.dim);
  if (!why.empty()) throw Error(why);
  const long long rows = a.exact.rows;
  if (a.capacity < filter_scan_capacity(rows, a.K)) throw Error("filtered scan: candidate buffers too small");
  const Sample sm = sample_for(rows, a.K);
  // Worth it only with a finite bound to lower the seed by.
  const bool seeded = sm.groups > 0 && std::isfinite(a.error_bound) && a.error_bound >= 0;
  const int tiles = tiles_for(a.batch, a.exact.dim);
  const std::size_t smem = tiles * tile_smem(a.exact.dim);
  constexpr int kSelect = Policy::kSelectThreads;
  for (int q0 = 0; q0 < a.batch; q0 += Policy::kMaxQueries) {
    FilterScanArgs f;
    f.model = static_cast<const __half*>(a.model);
    f.ldg = a.ldg;
    f.rows = a.exact.rows;
    f.inv_norms = a.inv_norms;
    f.queries = static_cast<const __half*>(a.queries_g) + static_cast<std::size_t>(q0) * a.ldg;
    f.nq = std::min(Policy::kMaxQueries, a.batch - q0);
    f.chunks = chunks_of(a.exact.dim);
    f.qgroups = ceil_div(f.nq, 8 * tiles);
    f.thresholds = a.thresholds + q0;
    f.cand = a.candidates;
    f.capacity = a.capacity;
    f.counts = a.counts;
    unsigned* thresholds = a.thresholds + q0;
    if (seeded) {
      FilterScanArgs sample = f;
      sample.groups = sm.groups;
      sample.stride = sm.stride;
      launch_scan(kernel_of<true>(tiles), sample, smem, s);
      seed_from_sample_kernel<kSelect><<<f.nq, kSelect, 0, s>>>(a.candidates, a.capacity, sm.groups * 16, a.K,
                                                               2.0f * a.error_bound * (1.0f + 0x1p-20f), thresholds);
      CUDA_CHECK_LAUNCH();
    } else {
      CUDA_CHECK(cudaMemsetAsync(thresholds, 0, f.nq * sizeof(unsigned), s));
    }
    CUDA_CHECK(cudaMemsetAsync(a.counts, 0, f.nq * sizeof(unsigned), s));
    f.groups = ceil_div(rows, 16ll);
    f.stride = 1;
    launch_scan(kernel_of<false>(tiles), f, smem, s);
    const std::size_t first = static_cast<std::size_t>(q0) * a.K;
    select_candidates_kernel<kSelect><<<f.nq, kSelect, 0, s>>>(
        a.candidates, a.capacity, a.counts, a.K, SliceLists{a.lists_s + first, a.lists_r + first, 1, a.K}, a.status + q0);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace distancies
