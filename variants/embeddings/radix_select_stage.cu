// Radix-select top-k (kernels/embeddings/radix_select.cuh): four 8-bit histogram passes on the device,
// CUB's DeviceSelect to compact the rows at or above the k-th key, one block to order them.
// No host round trip: the threshold and the count stay in device memory.
#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include <algorithm>

#include "kernels/embeddings/radix_select.cuh"
#include "runtime/device.hpp"
#include "variants/embeddings/cub_select_bytes.hpp"
#include "variants/embeddings/cub_sort.hpp"
#include "variants/embeddings/grid.hpp"
#include "variants/embeddings/large_k_select.hpp"
#include "variants/embeddings/policy.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {
namespace {

constexpr int kHistThreads = policy::Active::RadixSelect::kHistThreads;
constexpr int kSelectWarps = policy::Active::RadixSelect::kSelectWarps;

std::size_t align256(std::size_t b) { return round_up(b, 256); }

std::size_t select_bytes(int n) { return cub_select_bytes<AtLeastThreshold>(n); }

// temp: RadixState | count | chosen rows (n) | CUB scratch. Beyond k = 128 (the one-block
// order's limit): the rank-ordered large-k select (large_k_select.hpp), beyond kLargeKMax CUB's
// stable sort of everything; exact either way.
std::size_t radix_temp(int n, int k) {
  if (k > kLargeKMax) return cub_sort_temp_bytes(n);
  if (k > WarpTopk::kMaxK) return large_k_temp_bytes(n);
  return align256(sizeof(RadixState)) + align256(sizeof(int)) + align256(std::size_t(n) * sizeof(int)) +
         select_bytes(n);
}

void run_radix_select(TopkState& s, cudaStream_t stream) {
  if (s.n == 0) return;
  if (s.k > kLargeKMax) return cub_sort_all(s, stream);
  if (s.k > WarpTopk::kMaxK) return large_k_select(s, stream);
  auto* base = static_cast<char*>(s.temp);
  auto* st = reinterpret_cast<RadixState*>(base);
  int* count = reinterpret_cast<int*>(base + align256(sizeof(RadixState)));
  int* chosen = reinterpret_cast<int*>(reinterpret_cast<char*>(count) + align256(sizeof(int)));
  void* cub_temp = reinterpret_cast<char*>(chosen) + align256(std::size_t(s.n) * sizeof(int));
  std::size_t cub_bytes = select_bytes(s.n);

  CUDA_CHECK(cudaMemsetAsync(st, 0, sizeof(RadixState), stream));
  const int blocks = persistent_blocks(s.n, kHistThreads, 8);
  for (int shift = 24; shift >= 0; shift -= 8) {
    radix_histogram_kernel<<<blocks, kHistThreads, 0, stream>>>(s.sims, s.n, shift, std::min(s.k, s.n), st);
    CUDA_CHECK_LAUNCH();
  }
  CUDA_CHECK(cub::DeviceSelect::If(cub_temp, cub_bytes, thrust::counting_iterator<int>(0), chosen, count, s.n,
                                   AtLeastThreshold{s.sims, st}, stream));
  const std::size_t smem = lists_bytes(kSelectWarps, s.k);
  select_topk_kernel<kSelectWarps>
      <<<1, kSelectWarps * 32, smem, stream>>>(s.sims, s.idx, chosen, count, s.k, s.alt_sims, s.alt_idx);
  CUDA_CHECK_LAUNCH();
  std::swap(s.sims, s.alt_sims);
  std::swap(s.idx, s.alt_idx);
  s.chunks = 1;
}

}  // namespace

TopkStage radix_select_stage() {
  return TopkStage{"radix_select",
                   "4 x 8-bit histogram passes find the k-th key; CUB DeviceSelect + one block order the rest (k > "
                   "128: ranked over many blocks)",
                   "beyond the study"}
      .takes(StageData::Similarities)
      .leaves(StageData::TopK)
      .launched_by(run_radix_select, radix_temp);
}

}  // namespace distancies
