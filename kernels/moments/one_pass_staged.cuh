// one_pass with the matrix staged in shared memory: each block's chunks of whole rows come in
// by the TMA bulk copy (one instruction a chunk, completion on an mbarrier) into a ring of
// slots, and the threads read their elements from there. The loads in flight are then the
// ring's bytes, not what 32 registers a thread can hold between a load and its use (one_pass
// keeps 8 floats a thread in flight, and none while it does their arithmetic). Same sums, same
// merges as one_pass; only the order of a thread's elements differs.
#pragma once
#include "kernels/common/bulk_copy_ptx.cuh"
#include "kernels/moments/one_pass_moments.cuh"

namespace distancies {

constexpr int kStagedMaxRing = 8;

// The chunks of a row-major matrix with one column tile (cols <= 1024), cols and ld multiples
// of 4 and the matrix 16-byte aligned, so that every chunk is 16-byte aligned and sized.
struct StagedChunks {
  int rows;         // rows a chunk: a multiple of the map's slots (the last chunk may hold fewer)
  int ring;         // chunks in the ring (at most kStagedMaxRing)
  long long count;  // chunks over the matrix; block row group y takes y, y + groups, ...
};

// fp32 sums only (T = float): a template, as every kernel defined in a header.
template <class T>
__global__ void __launch_bounds__(kMomentsMaxThreads, 2)
    one_pass_staged_partials_kernel(MomentsInput in, ColumnMap map, StagedChunks ch, MomentPartials<T> out) {
  static_assert(sizeof(T) == 4, "one_pass_staged sums in fp32");
  extern __shared__ __align__(128) float staged[];  // ch.ring chunks of ch.rows * in.ld floats
  __shared__ StateShared<T> sm;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  __shared__ unsigned long long full[kStagedMaxRing];
#endif
  const int t = threadIdx.x;
  const long long chunk_floats = static_cast<long long>(ch.rows) * in.ld;
  const long long step = gridDim.y;
  auto rows_of = [&](long long c) {
    return static_cast<int>(min(static_cast<long long>(ch.rows), in.rows - c * ch.rows));
  };
  // Chunk c into ring slot s: from its first row up to the last row's last column (a multiple of
  // 16 bytes; a padded matrix need not hold the last row's padding).
  auto fill = [&](long long c, int s) {
    float* dst = staged + s * chunk_floats;
    const float* src = in.x + c * chunk_floats;
    const long long floats = static_cast<long long>(rows_of(c) - 1) * in.ld + in.cols;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (t == 0) ptx::bulk_copy_to_shared(dst, src, static_cast<unsigned>(floats * 4), full + s);
#else
    // Before sm_90 (the PTX a newer GPU may compile): the block copies the chunk itself.
    for (long long i = t; i < floats / 4; i += blockDim.x)
      reinterpret_cast<float4*>(dst)[i] = __ldg(reinterpret_cast<const float4*>(src) + i);
    __syncthreads();
#endif
  };
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (t == 0) {
    for (int s = 0; s < ch.ring; ++s) ptx::mbarrier_init(full + s, 1);
    ptx::fence_mbarrier_init();
  }
  __syncthreads();
  for (int s = 0; s < ch.ring; ++s)
    if (blockIdx.y + s * step < ch.count) fill(blockIdx.y + s * step, s);
#endif

  const bool live = t < map.width * map.slots;
  const int col = t % map.width, first_row = t / map.width;
  ShiftedSums<T> acc;
  acc.shift = live ? column_shift<false>(in, col) : T(0);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  unsigned phases = 0;
#endif
  int s = 0;
  for (long long c = blockIdx.y; c < ch.count; c += step) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    ptx::mbarrier_wait(full + s, (phases >> s) & 1u);
    phases ^= 1u << s;
#else
    fill(c, s);
#endif
    if (live) {
      const float* p = staged + s * chunk_floats + static_cast<long long>(first_row) * in.ld + col;
      const int n = rows_of(c);
#pragma unroll 4
      for (int r = first_row; r < n; r += map.slots, p += static_cast<long long>(map.slots) * in.ld) acc.add(*p);
    }
    __syncthreads();  // every thread is done with slot s: it may be refilled
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const long long next = c + ch.ring * step;
    if (next < ch.count) fill(next, s);
#endif
    s = s + 1 == ch.ring ? 0 : s + 1;
  }

  const MomentState<T> st = block_merge_columns<T, true>(acc.state(), map.width, map.slots, sm);
  if (t < map.width && t < in.cols) {
    const long long i = static_cast<long long>(t) * out.groups + blockIdx.y;
    out.n[i] = st.n;
    out.mean[i] = st.mean;
    out.m2[i] = st.m2;
    out.m3[i] = st.m3;
    out.m4[i] = st.m4;
  }
}

}  // namespace distancies
