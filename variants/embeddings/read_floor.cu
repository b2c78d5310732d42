// Dispatch for the memory-floor kernel: a persistent grid of a few blocks per SM.
#include "kernels/common/read_floor.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "variants/embeddings/policy.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {

namespace {
constexpr int kFloorThreads = policy::Active::ReadFloor::kThreads;
constexpr int kFloorUnroll = policy::Active::ReadFloor::kUnroll;
}  // namespace

// Enough resident blocks to keep every SM streaming.
int floor_sink_len() { return device_status().props.multiProcessorCount * 4; }

void launch_read_floor(const void* data, std::size_t bytes, float* sink, cudaStream_t s) {
  read_floor_kernel<kFloorThreads, kFloorUnroll><<<floor_sink_len(), kFloorThreads, 0, s>>>(
      static_cast<const float4*>(data), static_cast<long long>(bytes / sizeof(float4)), sink);
  CUDA_CHECK_LAUNCH();
}

}  // namespace distancies
