// Searches in one sorted list, for one thread: binary (lower bound), galloping from a cursor.
#pragma once

namespace distancies {

// First position in [lo, hi) whose id is >= x (hi when none).
__device__ __forceinline__ unsigned lower_bound_in(const unsigned* l, unsigned lo, unsigned hi, unsigned x) {
  while (lo < hi) {
    const unsigned mid = lo + (hi - lo) / 2;
    if (__ldg(l + mid) < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// First position in [lo, hi) whose id is > x (hi when none).
__device__ __forceinline__ unsigned upper_bound_in(const unsigned* l, unsigned lo, unsigned hi, unsigned x) {
  while (lo < hi) {
    const unsigned mid = lo + (hi - lo) / 2;
    if (__ldg(l + mid) <= x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// The same as lower_bound_in, found by doubling steps from `from` first (cheap when the answer is near): the
// galloping (exponential) search of Bentley and Yao.
__device__ __forceinline__ unsigned gallop_from(const unsigned* l, unsigned from, unsigned n, unsigned x) {
  if (from >= n || __ldg(l + from) >= x) return from;
  unsigned lo = from, step = 1;  // l[lo] < x
  while (lo + step < n && __ldg(l + lo + step) < x) {
    lo += step;
    step *= 2;
  }
  return lower_bound_in(l, lo + 1, min(lo + step, n), x);
}

// Moves forward one id at a time: the study's zipper.
__device__ __forceinline__ unsigned walk_from(const unsigned* l, unsigned from, unsigned n, unsigned x) {
  while (from < n && __ldg(l + from) < x) ++from;
  return from;
}

}  // namespace distancies
