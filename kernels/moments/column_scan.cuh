// The read loop every moments kernel shares: a thread's rows of its column, kUnroll
// independent loads in flight before any arithmetic (the loop is bound by memory).
#pragma once
#include "kernels/moments/moments_args.cuh"

namespace distancies {

struct ColumnMap {
  int width;  // columns per block tile (row-major) or 1 (column-major: one column per block)
  int slots;  // threads per column in a block
};

// Calls group(v) for each kUnroll elements of the calling thread's column share loaded together
// (float v[kUnroll]), then one(x) for each element left over; returns false when the thread has
// no column (outside the map or past the last column). Block (bx, by) covers the tile bx and the
// row groups by, by + gridDim.y, ...; column_out receives the column.
template <bool kColMajor, int kUnroll, class Group, class One>
__device__ __forceinline__ bool scan_column_groups(const MomentsInput& in, ColumnMap map, long long& column_out,
                                                   Group&& group, One&& one) {
  const int t = threadIdx.x;
  if (t >= map.width * map.slots) return false;
  const long long col = static_cast<long long>(blockIdx.x) * map.width + t % map.width;
  column_out = col;
  if (col >= in.cols) return false;
  const long long step_rows = static_cast<long long>(gridDim.y) * map.slots;
  long long r = static_cast<long long>(blockIdx.y) * map.slots + t / map.width;
  const long long stride = kColMajor ? step_rows : step_rows * in.ld;
  const float* p = in.x + (kColMajor ? col * in.ld + r : r * in.ld + col);
  for (; r + (kUnroll - 1) * step_rows < in.rows; r += kUnroll * step_rows, p += kUnroll * stride) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(p + u * stride);
    group(v);
  }
  for (; r < in.rows; r += step_rows, p += stride) one(__ldg(p));
  return true;
}

// Calls f(x) for every element of the calling thread's column share, kUnroll loads in flight.
template <bool kColMajor, int kUnroll, class F>
__device__ __forceinline__ bool scan_column(const MomentsInput& in, ColumnMap map, long long& column_out, F&& f) {
  return scan_column_groups<kColMajor, kUnroll>(
      in, map, column_out,
      [&](const float(&v)[kUnroll]) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) f(v[u]);
      },
      f);
}

// The first value of the calling thread's column (0 outside the matrix): the shift of
// the one-pass sums, the same for every thread of the column.
template <bool kColMajor>
__device__ __forceinline__ float column_shift(const MomentsInput& in, long long col) {
  if (col < 0 || col >= in.cols) return 0.0f;
  return __ldg(in.x + (kColMajor ? col * in.ld : col));
}

}  // namespace distancies
