#include "variants/embeddings/large_k_select.hpp"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>

#include "harness/runtime/device.hpp"
#include "harness/runtime/launch.hpp"
#include "kernels/embeddings/large_k_order.cuh"
#include "variants/embeddings/cub_select_bytes.hpp"
#include "variants/embeddings/policy.hpp"

namespace distancies {
namespace {

constexpr int kHistThreads = policy::Active::RadixSelect::kHistThreads;
constexpr int kOrderThreads = 128;

std::size_t align256(std::size_t b) { return round_up(b, 256); }

std::size_t select_bytes(int n) {
  return std::max(cub_select_bytes<AboveThreshold>(n), cub_select_bytes<AtThreshold>(n));
}

}  // namespace

// temp: RadixState | 2 counts | rows above (n) | rows at (n) | CUB scratch.
std::size_t large_k_temp_bytes(int n) {
  return align256(sizeof(RadixState)) + align256(2 * sizeof(int)) + 2 * align256(std::size_t(n) * sizeof(int)) +
         select_bytes(n);
}

void large_k_select_into(const float* sims, const int* idx, int n, int k, void* temp, float* out_s, int* out_r,
                         cudaStream_t stream) {
  if (k > 2 * kLargeKMax) throw Error("large_k_select: k above " + std::to_string(2 * kLargeKMax));
  auto* base = static_cast<char*>(temp);
  auto* st = reinterpret_cast<RadixState*>(base);
  int* counts = reinterpret_cast<int*>(base + align256(sizeof(RadixState)));
  int* above = reinterpret_cast<int*>(reinterpret_cast<char*>(counts) + align256(2 * sizeof(int)));
  int* at = reinterpret_cast<int*>(reinterpret_cast<char*>(above) + align256(std::size_t(n) * sizeof(int)));
  void* cub_temp = reinterpret_cast<char*>(at) + align256(std::size_t(n) * sizeof(int));
  std::size_t cub_bytes = select_bytes(n);

  const int kk = std::min(k, n);
  CUDA_CHECK(cudaMemsetAsync(st, 0, sizeof(RadixState), stream));
  const int blocks = persistent_blocks(n, kHistThreads, 8);
  for (int shift = 24; shift >= 0; shift -= 8) {
    radix_histogram_kernel<<<blocks, kHistThreads, 0, stream>>>(sims, n, shift, kk, st);
    CUDA_CHECK_LAUNCH();
  }
  // Order kept: the ties at the k-th key come in row order, so the first `remaining` of them are
  // the smaller rows (idx[i] = i).
  CUDA_CHECK(cub::DeviceSelect::If(cub_temp, cub_bytes, thrust::counting_iterator<int>(0), above, counts, n,
                                   AboveThreshold{sims, st}, stream));
  CUDA_CHECK(cub::DeviceSelect::If(cub_temp, cub_bytes, thrust::counting_iterator<int>(0), at, counts + 1, n,
                                   AtThreshold{sims, st}, stream));
  const std::size_t smem = std::size_t(kk) * sizeof(ScoredRow);
  allow_dynamic_smem(order_chosen_kernel<kOrderThreads>, smem, "large_k_select");
  const int order_blocks = static_cast<int>(ceil_div(k, kOrderThreads));
  order_chosen_kernel<kOrderThreads><<<order_blocks, kOrderThreads, smem, stream>>>(sims, idx, above, at, st, kk, k,
                                                                                    out_s, out_r);
  CUDA_CHECK_LAUNCH();
}

void large_k_select(TopkState& s, cudaStream_t stream) {
  if (s.n == 0) return;
  if (s.k > kLargeKMax) throw Error("large_k_select: k above " + std::to_string(kLargeKMax));
  large_k_select_into(s.sims, s.idx, s.n, s.k, s.temp, s.alt_sims, s.alt_idx, stream);
  std::swap(s.sims, s.alt_sims);
  std::swap(s.idx, s.alt_idx);
  s.chunks = 1;
}

}  // namespace distancies
