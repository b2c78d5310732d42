// Merging the per-thread results of one block column by column. A block covers a tile of
// `width` columns with `slots` threads per column: thread t reads column t % width, row slot
// t / width, so a warp reads consecutive addresses of a row-major matrix.
#pragma once
#include "kernels/moments/moment_state.cuh"

namespace distancies {

constexpr int kMomentsMaxThreads = 1024;

template <class T>
struct StateShared {
  long long n[kMomentsMaxThreads];
  T mean[kMomentsMaxThreads], m2[kMomentsMaxThreads], m3[kMomentsMaxThreads], m4[kMomentsMaxThreads];
  __device__ __forceinline__ void put(int i, const MomentState<T>& s) {
    n[i] = s.n;
    mean[i] = s.mean;
    m2[i] = s.m2;
    m3[i] = s.m3;
    m4[i] = s.m4;
  }
  __device__ __forceinline__ MomentState<T> get(int i) const { return {n[i], mean[i], m2[i], m3[i], m4[i]}; }
};

// Tree over the slots of each column in shared memory: log2(slots) steps, each merging
// pairs (q, q + h). Entries [slot * width + column], slots in [0, slots).
template <class T>
__device__ __forceinline__ void tree_merge_shared(StateShared<T>& sm, int width, int slots) {
  int pow2 = 1;
  while (pow2 < slots) pow2 <<= 1;
  const int t = threadIdx.x;
  for (int h = pow2 / 2; h > 0; h >>= 1) {
    if (t < width * h) {
      const int q = t / width, c = t % width;
      if (q + h < slots) sm.put(q * width + c, merge_states(sm.get(q * width + c), sm.get((q + h) * width + c)));
    }
    __syncthreads();
  }
}

// Returns, in threads t < width, the merged state of tile column t. Threads outside the
// map must hold the empty state. kShuffle: where the width divides 32, the first levels
// run inside each warp with shuffles (no shared memory, no barrier), leaving one state per
// column and warp for the shared-memory tree.
template <class T, bool kShuffle>
__device__ __forceinline__ MomentState<T> block_merge_columns(MomentState<T> s, int width, int slots,
                                                              StateShared<T>& sm) {
  const int t = threadIdx.x, lane = t % 32;
  int slot = t / width, n_slots = slots;
  bool live = t < width * slots;
  if (kShuffle && width < 32 && 32 % width == 0) {
    for (int off = width; off < 32; off *= 2) {
      const MomentState<T> o = shuffle_down(s, off);
      if ((lane / width) % (2 * off / width) == 0) s = merge_states(s, o);
    }
    slot = t / 32;  // one state per column and warp, in lanes [0, width)
    n_slots = blockDim.x / 32;
    live = lane < width;
  }
  if (live) sm.put(slot * width + t % width, s);
  __syncthreads();
  tree_merge_shared(sm, width, n_slots);
  return t < width ? sm.get(t) : empty_state<T>();
}

// The seed's shared-memory reduction of K per-thread values per column (sums, minima,
// maxima), with `combine(k, a, b)` per value; sm holds K * blockDim.x entries.
template <int K, class T, class Combine>
__device__ __forceinline__ void block_combine_columns(T (&v)[K], int width, int slots, T* sm, Combine combine) {
  const int t = threadIdx.x, b = blockDim.x;
#pragma unroll
  for (int k = 0; k < K; ++k) sm[k * b + t] = v[k];
  __syncthreads();
  int pow2 = 1;
  while (pow2 < slots) pow2 <<= 1;
  for (int h = pow2 / 2; h > 0; h >>= 1) {
    if (t < width * h) {
      const int q = t / width, c = t % width;
      if (q + h < slots)
#pragma unroll
        for (int k = 0; k < K; ++k)
          sm[k * b + q * width + c] = combine(k, sm[k * b + q * width + c], sm[k * b + (q + h) * width + c]);
    }
    __syncthreads();
  }
  if (t < width)
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = sm[k * b + t];
}

}  // namespace distancies
