// Every CUDA call is checked; a failure becomes one clear distancies::Error line.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "runtime/error.hpp"

namespace distancies {

// cudaErrorMemoryAllocation becomes OutOfMemory (throw_out_of_memory), anything else Error.
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line);

// The one way an allocation failure is reported, ours or a library's (cuBLAS's workspace, a
// CUDA call that allocates): OutOfMemory, "GPU out of memory: <what> needs <bytes>, <free> of
// <total> free" (bytes 0: unknown, left out), or "out of page-locked host memory: ...".
enum class MemoryKind { Device, PinnedHost };
[[noreturn]] void throw_out_of_memory(MemoryKind kind, const std::string& what, std::size_t bytes);

}  // namespace distancies

#define CUDA_CHECK(expr)                                                                                            \
  do {                                                                                                              \
    cudaError_t distancies_err_ = (expr);                                                                           \
    if (distancies_err_ != cudaSuccess) ::distancies::throw_cuda_error(distancies_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// After every launch: configuration errors show at once, faults at the next sync. Built with
// -DDISTANCIES_DEBUG_SYNC=ON, every launch also synchronises, so a fault is reported at the
// launch that caused it (timings are then meaningless).
#if defined(DISTANCIES_DEBUG_SYNC) && DISTANCIES_DEBUG_SYNC
#define CUDA_CHECK_LAUNCH()              \
  do {                                   \
    CUDA_CHECK(cudaGetLastError());      \
    CUDA_CHECK(cudaDeviceSynchronize()); \
  } while (0)
#else
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
#endif

namespace distancies {
// Whether CUDA_CHECK_LAUNCH synchronises (for reports: such a build's timings do not count).
#if defined(DISTANCIES_DEBUG_SYNC) && DISTANCIES_DEBUG_SYNC
constexpr bool kDebugSync = true;
#else
constexpr bool kDebugSync = false;
#endif
}  // namespace distancies
