#include "variants/embeddings/large_k_select.hpp"

#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstdint>

#include "kernels/embeddings/large_k_order.cuh"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "variants/embeddings/cub_select_bytes.hpp"
#include "variants/embeddings/policy.hpp"

namespace distancies {
namespace {

constexpr int kHistThreads = policy::Active::RadixSelect::kHistThreads;
constexpr int kOrderThreads = 256;
constexpr int kOrderGroup = 8;  // threads ranking one entry

std::size_t align256(std::size_t b) { return round_up(b, 256); }

std::size_t select_bytes(int n) { return cub_select_bytes<AtThreshold>(n); }

}  // namespace

// temp: RadixState | 2 counts | rows above (n) | rows at (n) | CUB scratch.
std::size_t large_k_temp_bytes(int n) {
  return align256(sizeof(RadixState)) + align256(2 * sizeof(int)) + 2 * align256(std::size_t(n) * sizeof(int)) +
         select_bytes(n);
}

namespace {

struct SelectTemp {
  RadixState* st;
  int* counts;  // rows above the threshold, rows at it
  int* above;
  int* at;
  void* cub_temp;
};

SelectTemp carve(void* temp, int n) {
  auto* base = static_cast<char*>(temp);
  SelectTemp t{};
  t.st = reinterpret_cast<RadixState*>(base);
  t.counts = reinterpret_cast<int*>(base + align256(sizeof(RadixState)));
  t.above = reinterpret_cast<int*>(reinterpret_cast<char*>(t.counts) + align256(2 * sizeof(int)));
  t.at = reinterpret_cast<int*>(reinterpret_cast<char*>(t.above) + align256(std::size_t(n) * sizeof(int)));
  t.cub_temp = reinterpret_cast<char*>(t.at) + align256(std::size_t(n) * sizeof(int));
  return t;
}

// The threshold: the wanted-th largest key, four 8-bit histogram passes (the state and the
// compaction's counts zeroed by one memset).
void find_threshold(const float* keys, int n, int wanted, const SelectTemp& t, cudaStream_t stream) {
  if (reinterpret_cast<std::uintptr_t>(keys) % 16 != 0) throw Error("large_k_select: the keys must be 16-byte aligned");
  CUDA_CHECK(cudaMemsetAsync(t.st, 0, align256(sizeof(RadixState)) + 2 * sizeof(int), stream));
  const int blocks = persistent_blocks(ceil_div(n, 8), kHistThreads, 8);  // 8 keys a thread a step
  for (int shift = 24; shift >= 0; shift -= 8) {
    radix_histogram_kernel<<<blocks, kHistThreads, 0, stream>>>(keys, n, shift, wanted, t.st);
    CUDA_CHECK_LAUNCH();
  }
}

void compact(const float* keys, int n, int wanted, bool take_ties, const SelectTemp& t, int* out, cudaStream_t stream) {
  const int blocks = persistent_blocks(ceil_div(n, 4), kHistThreads, 8);
  compact_chosen_kernel<<<blocks, kHistThreads, 0, stream>>>(keys, n, t.st, wanted, take_ties, t.counts, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void large_k_select_into(const float* sims, const int* idx, int n, int k, void* temp, float* out_s, int* out_r,
                         cudaStream_t stream) {
  if (k > 2 * kLargeKMax) throw Error("large_k_select: k above " + std::to_string(2 * kLargeKMax));
  const SelectTemp t = carve(temp, n);
  std::size_t cub_bytes = select_bytes(n);
  const int kk = std::min(k, n);
  find_threshold(sims, n, kk, t, stream);
  // The rows above the threshold in any order (the ranks order them), the ties at it in row
  // order (CUB, order kept), so the first `remaining` of them are the smaller rows (idx[i] = i).
  compact(sims, n, kk, false, t, t.above, stream);
  CUDA_CHECK(cub::DeviceSelect::If(t.cub_temp, cub_bytes, thrust::counting_iterator<int>(0), t.at, t.counts + 1, n,
                                   AtThreshold{sims, t.st}, stream));
  const std::size_t smem = std::size_t(kk) * sizeof(ScoredRow);
  allow_dynamic_smem(order_chosen_kernel<kOrderThreads, kOrderGroup>, smem, "large_k_select");
  const int order_blocks = static_cast<int>(ceil_div(staged_place_threads(kk, k, kOrderGroup), kOrderThreads));
  order_chosen_kernel<kOrderThreads, kOrderGroup>
      <<<order_blocks, kOrderThreads, smem, stream>>>(sims, idx, t.above, t.at, t.st, kk, k, out_s, out_r);
  CUDA_CHECK_LAUNCH();
}

const RadixState* large_k_choose_into(const float* keys, int n, int K, void* temp, int* rows, cudaStream_t stream) {
  if (K > 2 * kLargeKMax) throw Error("large_k_select: K above " + std::to_string(2 * kLargeKMax));
  const SelectTemp t = carve(temp, n);
  const int kk = std::min(K, n);
  find_threshold(keys, n, kk, t, stream);
  compact(keys, n, kk, true, t, rows, stream);
  return t.st;
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
