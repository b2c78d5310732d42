// CUB DeviceSelect::If's scratch for n candidate indices under a radix-threshold predicate
// (kernels/embeddings/radix_select.cuh). It depends only on n, so it is asked once per n and
// thread: the query costs host time that would show as an idle GPU inside a timed stage.
#pragma once
#include <thrust/iterator/counting_iterator.h>
#include <cub/device/device_select.cuh>

#include <cstddef>

#include "runtime/device.hpp"

namespace distancies {

template <class Predicate>
std::size_t cub_select_bytes(int n) {
  thread_local int last_n = -1;
  thread_local std::size_t last_bytes = 0;
  if (n != last_n) {
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, thrust::counting_iterator<int>(0), static_cast<int*>(nullptr),
                                     static_cast<int*>(nullptr), n, Predicate{nullptr, nullptr}));
    last_bytes = bytes;
    last_n = n;
  }
  return last_bytes;
}

}  // namespace distancies
