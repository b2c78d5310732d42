// The engine's injected slowdown (--inject-slowdown): a one-thread kernel that busy-waits on the
// GPU's global timer. It exists so the regression gate's detection rate can be measured against
// a known, real slowdown (docs/regression.md); a normal run never launches it.
#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/cuda_check.hpp"

namespace distancies::bench {
namespace {

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// %globaltimer counts nanoseconds whatever the SM clock does (clock64 counts cycles, which
// change with the clock), so the wait is the same length at any clock.
__global__ void spin_kernel(std::uint64_t ns) {
  const std::uint64_t t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}

}  // namespace

void launch_spin(double ms, cudaStream_t stream) {
  if (!(ms > 0)) return;
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<std::uint64_t>(ms * 1e6));
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace distancies::bench
