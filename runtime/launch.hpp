// Host-side launch helpers, in one place: grid sizes and the dynamic shared-memory limit with
// its opt-in. The arithmetic kernels share with the host (ceil_div, round_up) is
// kernels/common/launch.hpp.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <utility>

#include "kernels/common/launch.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"

namespace distancies {

// Dynamic shared memory any launch may use; beyond it a kernel must opt in (allow_dynamic_smem).
constexpr std::size_t kDefaultDynamicSmemBytes = 48 * 1024;

// Blocks of `threads` threads covering `n` items, one item a thread (0 when n is 0: callers
// skip empty launches). More blocks than a grid can have is an Error.
inline unsigned blocks_for(long long n, int threads) {
  const long long blocks = ceil_div(n, threads);
  if (blocks > INT_MAX) throw Error("a launch over " + std::to_string(n) + " items exceeds the CUDA grid limit");
  return static_cast<unsigned>(blocks);
}

// A persistent grid: enough blocks for `n` items at `per_block` each, at most `per_sm` per SM.
inline int persistent_blocks(long long n, long long per_block, int per_sm) {
  const long long needed = ceil_div(n, per_block);
  const long long cap = static_cast<long long>(device_status().props.multiProcessorCount) * per_sm;
  return static_cast<int>(std::max(1LL, std::min(needed, cap)));
}

// Lets `kernel` launch with `bytes` of dynamic shared memory: beyond the 48 KB default it has
// to opt in (cheap to repeat before every launch). More than the GPU allows a block is an Error.
template <class Kernel>
void allow_dynamic_smem(Kernel* kernel, std::size_t bytes, const char* what) {
  if (bytes <= kDefaultDynamicSmemBytes) return;
  const std::size_t most = device_status().props.sharedMemPerBlockOptin;
  if (bytes > most)
    throw Error(std::string(what) + " needs " + std::to_string(bytes) +
                " bytes of shared memory per block; this GPU allows " + std::to_string(most));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

// Programmatic dependent launch is on where the device has it (sm_90+), unless the environment
// sets DISTANCIES_PDL=0 (to measure what it brings: docs/methodology.md).
inline bool dependent_launch_enabled() {
  static const bool enabled = [] {
    const char* env = std::getenv("DISTANCIES_PDL");
    return !(env != nullptr && std::string(env) == "0") && device_status().props.major >= 9;
  }();
  return enabled;
}

// Launches kernel<<<grid, block, smem, stream>>>(args...) as a programmatic dependent launch
// (kernels/common/dependent_launch.cuh): the kernel must call wait_for_prerequisites() before it
// reads what earlier work in the stream wrote. Where the device cannot (before sm_90) the
// attribute is left out and the launch is an ordinary one.
template <class... Params, class... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, unsigned block, std::size_t smem, cudaStream_t stream,
                      Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(block);
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attr;
  config.numAttrs = dependent_launch_enabled() ? 1 : 0;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
  CUDA_CHECK_LAUNCH();
}

}  // namespace distancies
