#include "kernels/common/launch.hpp"
#include "kernels/common/radix_digit.cuh"
#include "kernels/embeddings/radix_select.cuh"

namespace distancies {

namespace {

// One warp of the last block: the digit holding the remaining-th largest key, from the pass's
// histogram staged in shared memory (h; warp_choose_digit).
__device__ void choose_digit(const unsigned* h, int shift, int wanted, RadixState* st, int lane) {
  const int remaining = shift == 24 ? wanted : st->remaining;  // the first pass starts from the k wanted
  const DigitChoice c = warp_choose_digit(h, remaining, lane);
  if (c.digit >= 0) {
    st->prefix |= static_cast<unsigned>(c.digit) << shift;
    st->mask |= 0xFFu << shift;
    st->remaining = c.still;
  }
}

// Adds one key to the block's histogram. Whole warps call it together (the match needs every
// lane); similarities crowd into a few digits (the exponent byte first), so lanes with the same
// digit add once, not 32 times; a warp with no key under the prefix (most, after the first
// pass) skips the match.
__device__ __forceinline__ void count_key(unsigned* h, float s, bool valid, unsigned prefix, unsigned mask, int shift,
                                          int lane) {
  const unsigned key = radix_key(s);
  const bool counts = valid && (key & mask) == prefix;
  if (!__any_sync(0xffffffffu, counts)) return;
  const unsigned digit = counts ? (key >> shift) & 0xFFu : 256u;  // 256: not counted
  const unsigned same = __match_any_sync(0xffffffffu, digit);
  if (counts && lane == __ffs(same) - 1) atomicAdd(&h[digit], static_cast<unsigned>(__popc(same)));
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
  // 16-byte loads, two in flight per thread: one 4-byte load per thread left the pass waiting on
  // memory latency (16-29 us for 2.2 M keys, Nsight Compute); the array is 16-byte aligned
  // (a cudaMalloc'd workspace), the last n % 4 keys are warp 0 of block 0's.
  const long long n4 = n / 4;
  const auto* s4 = reinterpret_cast<const float4*>(sims);
  const long long end = (n4 + 2 * stride - 1) / (2 * stride) * (2 * stride);  // whole warps iterate together
  for (long long i = global_thread_index(); i < end; i += 2 * stride) {
    const bool va = i < n4, vb = i + stride < n4;
    const float4 a = va ? __ldg(s4 + i) : make_float4(0, 0, 0, 0);
    const float4 b = vb ? __ldg(s4 + i + stride) : make_float4(0, 0, 0, 0);
    count_key(h, a.x, va, prefix, mask, shift, lane);
    count_key(h, a.y, va, prefix, mask, shift, lane);
    count_key(h, a.z, va, prefix, mask, shift, lane);
    count_key(h, a.w, va, prefix, mask, shift, lane);
    count_key(h, b.x, vb, prefix, mask, shift, lane);
    count_key(h, b.y, vb, prefix, mask, shift, lane);
    count_key(h, b.z, vb, prefix, mask, shift, lane);
    count_key(h, b.w, vb, prefix, mask, shift, lane);
  }
  if (blockIdx.x == 0 && threadIdx.x < 32) {
    const long long i = 4 * n4 + lane;
    count_key(h, i < n ? sims[i] : 0.0f, i < n, prefix, mask, shift, lane);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 256; i += blockDim.x)
    if (h[i]) atomicAdd(&st->hist[i], h[i]);
  // The last block to finish chooses the digit (no separate launch) and resets the ticket.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(&st->blocks_done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (last) {
    __threadfence();
    // The pass's totals into shared memory (past L1: other blocks' atomics wrote them), and
    // cleared for the next pass.
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
      h[i] = __ldcg(&st->hist[i]);
      st->hist[i] = 0;
    }
    __syncthreads();
    if (threadIdx.x < 32) choose_digit(h, shift, wanted, st, lane);
    if (threadIdx.x == 0) st->blocks_done = 0;
  }
}

namespace {

// Appends row i to out when `take` (one atomic per warp: the lanes' slots by ballot rank).
__device__ __forceinline__ int warp_slot(bool take, int* counter, int lane) {
  const unsigned who = __ballot_sync(0xffffffffu, take);
  if (!who) return -1;
  int base = 0;
  if (lane == __ffs(who) - 1) base = atomicAdd(counter, __popc(who));
  base = __shfl_sync(0xffffffffu, base, __ffs(who) - 1);
  return take ? base + __popc(who & ((1u << lane) - 1u)) : -1;
}

__device__ __forceinline__ void compact_key(float s, long long i, bool valid, const RadixState& st, int above_total,
                                            bool take_ties, int* counts, int* out, int lane) {
  const unsigned key = radix_key(s);
  const int a = warp_slot(valid && key > st.prefix, counts, lane);
  if (a >= 0) out[a] = static_cast<int>(i);
  if (!take_ties) return;
  const int t = warp_slot(valid && key == st.prefix, counts + 1, lane);
  if (t >= 0 && t < st.remaining) out[above_total + t] = static_cast<int>(i);
}

}  // namespace

__global__ void compact_chosen_kernel(const float* keys, int n, const RadixState* st, int wanted, bool take_ties,
                                      int* counts, int* out) {
  const RadixState s = *st;
  const int above_total = wanted - s.remaining;  // every key above the threshold is chosen
  const int lane = threadIdx.x % 32;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long n4 = n / 4;
  const auto* k4 = reinterpret_cast<const float4*>(keys);
  const long long end = (n4 + stride - 1) / stride * stride;  // whole warps iterate together
  for (long long i = global_thread_index(); i < end; i += stride) {
    const bool v = i < n4;
    const float4 a = v ? __ldg(k4 + i) : make_float4(0, 0, 0, 0);
    compact_key(a.x, 4 * i, v, s, above_total, take_ties, counts, out, lane);
    compact_key(a.y, 4 * i + 1, v, s, above_total, take_ties, counts, out, lane);
    compact_key(a.z, 4 * i + 2, v, s, above_total, take_ties, counts, out, lane);
    compact_key(a.w, 4 * i + 3, v, s, above_total, take_ties, counts, out, lane);
  }
  if (blockIdx.x == 0 && threadIdx.x < 32) {
    const long long i = 4 * n4 + lane;
    compact_key(i < n ? keys[i] : 0.0f, i, i < n, s, above_total, take_ties, counts, out, lane);
  }
}

}  // namespace distancies
