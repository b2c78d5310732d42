#include "kernels/embeddings/radix_select.cuh"
#include "kernels/common/launch.hpp"

namespace distancies {

namespace {

// One thread: the digit holding the remaining-th largest key; clears the histogram.
__device__ void choose_digit(int shift, int wanted, RadixState* st) {
  if (shift == 24) st->remaining = wanted;  // the first pass starts from the k wanted (state zeroed)
  int above = 0, d = 255;
  for (; d > 0; --d) {
    if (above + static_cast<int>(st->hist[d]) >= st->remaining) break;
    above += st->hist[d];
  }
  st->prefix |= static_cast<unsigned>(d) << shift;
  st->mask |= 0xFFu << shift;
  st->remaining -= above;
  for (int i = 0; i < 256; ++i) st->hist[i] = 0;
}

}  // namespace

__global__ void radix_histogram_kernel(const float* sims, int n, int shift, int wanted, RadixState* st) {
  __shared__ unsigned h[256];
  __shared__ bool last;
  for (int i = threadIdx.x; i < 256; i += blockDim.x) h[i] = 0;
  __syncthreads();
  const unsigned prefix = st->prefix, mask = st->mask;
  const int lane = threadIdx.x % 32;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  // Whole warps iterate together (the match below needs every lane); similarities crowd into a
  // few digits (the exponent byte first), so lanes with the same digit add once, not 32 times.
  const long long end = (n + 31) / 32 * 32;
  for (long long i = global_thread_index(); i < end; i += stride) {
    const unsigned key = i < n ? radix_key(sims[i]) : 0u;
    const bool counts = i < n && (key & mask) == prefix;
    const unsigned digit = counts ? (key >> shift) & 0xFFu : 256u;  // 256: not counted
    const unsigned same = __match_any_sync(0xffffffffu, digit);
    if (counts && lane == __ffs(same) - 1) atomicAdd(&h[digit], static_cast<unsigned>(__popc(same)));
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    if (h[i]) atomicAdd(&st->hist[i], h[i]);
  // The last block to finish chooses the digit (no separate launch) and resets the ticket.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&st->blocks_done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();
    choose_digit(shift, wanted, st);
    st->blocks_done = 0;
  }
}

}  // namespace distancies
