// Launch arithmetic shared by the host dispatch and the kernels: one spelling of "how many
// blocks" and "rounded up to a multiple", instead of (n + d - 1) / d written out everywhere.
#pragma once
#include "kernels/common/host_device.hpp"

namespace distancies {

namespace detail {
template <class T>
struct same_type {
  using type = T;
};
}  // namespace detail

// ceil(n / d) for n >= 0, d > 0, in the type of n (d converts to it).
template <class T>
DISTANCIES_HD constexpr T ceil_div(T n, typename detail::same_type<T>::type d) {
  return (n + d - 1) / d;
}

// n rounded up to a multiple of m (n >= 0, m > 0).
template <class T>
DISTANCIES_HD constexpr T round_up(T n, typename detail::same_type<T>::type m) {
  return ceil_div(n, m) * m;
}

#if defined(__CUDACC__)
// This thread's index in a one-dimensional grid, in 64 bits (grids over more than 2^31 items).
__device__ __forceinline__ long long global_thread_index() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}
#endif

}  // namespace distancies
