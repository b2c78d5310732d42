// One pass over the matrix: per-thread shifted power sums, turned into (n, mean, M2, M3, M4)
// and merged pairwise (Chan / Pébay) inside the block, then across blocks by a second kernel
// that also applies the estimator. The matrix is read once.
#pragma once
#include "kernels/moments/block_merge.cuh"
#include "kernels/moments/column_scan.cuh"

namespace distancies {

// Per-block partial states, structure of arrays, entry [column * groups + block row group];
// means relative to the column's shift (its first value).
template <class T>
struct MomentPartials {
  long long* n;
  T *mean, *m2, *m3, *m4;
  int groups;
};

// fp32: two blocks of 1024 threads per SM (32 registers): the read loop needs no more, and
// what the merge at the end would want beyond them costs little once per thread.
template <class T, bool kColMajor, bool kShuffle, int kUnroll>
__global__ void __launch_bounds__(kMomentsMaxThreads, sizeof(T) == 4 ? 2 : 1)
    one_pass_partials_kernel(MomentsInput in, ColumnMap map, MomentPartials<T> out) {
  __shared__ StateShared<T> sm;
  ShiftedSums<T> acc;
  acc.shift = T(column_shift<kColMajor>(
      in, static_cast<long long>(blockIdx.x) * map.width + static_cast<int>(threadIdx.x) % map.width));
  long long col = 0;
  scan_column_groups<kColMajor, kUnroll>(
      in, map, col, [&](const float(&v)[kUnroll]) { acc.add_group(v); }, [&](float x) { acc.add(x); });
  const MomentState<T> s = block_merge_columns<T, kShuffle>(acc.state(), map.width, map.slots, sm);
  const long long c = static_cast<long long>(blockIdx.x) * map.width + threadIdx.x;
  if (static_cast<int>(threadIdx.x) < map.width && c < in.cols) {
    const long long i = c * out.groups + blockIdx.y;
    out.n[i] = s.n;
    out.mean[i] = s.mean;
    out.m2[i] = s.m2;
    out.m3[i] = s.m3;
    out.m4[i] = s.m4;
  }
}

// One warp per column: lanes merge the block partials in turn, then a shuffle tree. In fp64
// whatever the partials' type: a few hundred merges a column, nothing beside the read, and each
// fp32 merge would add its rounding to the result.
template <class T, bool kColMajor>
__global__ void merge_partials_kernel(MomentPartials<T> p, MomentsInput in, MomentsOutput out) {
  const int cols = in.cols;
  const long long col = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (col >= cols) return;  // whole warps leave together
  MomentState<double> s = empty_state<double>();
  for (int g = lane; g < p.groups; g += 32) {
    const long long i = col * p.groups + g;
    s = merge_states(s,
                     MomentState<double>{p.n[i], double(p.mean[i]), double(p.m2[i]), double(p.m3[i]), double(p.m4[i])});
  }
  for (int off = 16; off > 0; off >>= 1) s = merge_states(s, shuffle_down(s, off));
  if (lane == 0)
    finalize_moments(s.n, double(column_shift<kColMajor>(in, col)) + s.mean, s.m2, s.m3, s.m4, in.estimator,
                     out.mean + col, out.variance + col, out.skewness + col, out.kurtosis + col);
}

}  // namespace distancies
