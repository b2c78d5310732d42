// Every CUDA call is checked; a failure becomes one clear distancies::Error line.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "harness/error.hpp"

namespace distancies {

[[noreturn]] void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line);

}  // namespace distancies

#define CUDA_CHECK(expr)                                                              \
  do {                                                                                \
    cudaError_t distancies_err_ = (expr);                                             \
    if (distancies_err_ != cudaSuccess)                                               \
      ::distancies::throw_cuda_error(distancies_err_, #expr, __FILE__, __LINE__);     \
  } while (0)

// After every launch: configuration errors show at once, faults at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
