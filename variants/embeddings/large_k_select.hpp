// Exact top k beyond the shared-memory lists (128 < k <= kLargeKMax) over a similarity array:
// a radix select of the k-th key, the rows above it and the first ties at it compacted (CUB
// DeviceSelect, order kept), then ordered by rank (kernels/embeddings/large_k_order.cuh). No
// host round trip. Beyond kLargeKMax the stages keep CUB's sort of every row.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "variants/embeddings/registry.hpp"

namespace distancies {

struct RadixState;  // kernels/embeddings/radix_select.cuh

constexpr int kLargeKMax = 4096;  // the order kernel stages k entries (32 KB) in shared memory

std::size_t large_k_temp_bytes(int n);

// state.sims/idx: n similarities with idx[i] = i (a dot's output). Leaves the best k first in
// state.sims/idx (through the alternate buffers), sorted; fewer rows than k: sentinels after.
void large_k_select(TopkState& s, cudaStream_t stream);

// The same over any array: the best k of sims[0..n) (rows idx[i], or i when idx is null) sorted
// into out_s/out_r (k entries, sentinels past n); temp of large_k_temp_bytes(n).
void large_k_select_into(const float* sims, const int* idx, int n, int k, void* temp, float* out_s, int* out_r,
                         cudaStream_t stream);

// The rows of the best min(K, n) keys of keys[0..n) into rows[0..min(K, n)), in no particular
// order (ties at the threshold: any of them); returns the device state whose `prefix` is the
// threshold's radix key (the K-th key: from_radix_key). temp of large_k_temp_bytes(n); keys
// 16-byte aligned.
const RadixState* large_k_choose_into(const float* keys, int n, int K, void* temp, int* rows, cudaStream_t stream);

}  // namespace distancies
