// Test helper: holds all but LEAVE_MB of the GPU's free memory until killed, so another process
// can be tested against a card that is nearly full (tests/two_processes.sh). Prints "holding".
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hold_gpu_memory LEAVE_MB\n");
    return 2;
  }
  const std::size_t leave = std::strtoull(argv[1], nullptr, 10) << 20;
  std::size_t free_b = 0, total = 0;
  if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) {
    std::fprintf(stderr, "hold_gpu_memory: no usable GPU\n");
    return 77;
  }
  if (free_b <= leave) {
    std::fprintf(stderr, "hold_gpu_memory: only %zu MiB free\n", free_b >> 20);
    return 1;
  }
  void* p = nullptr;
  if (cudaMalloc(&p, free_b - leave) != cudaSuccess) {
    std::fprintf(stderr, "hold_gpu_memory: cannot allocate %zu MiB\n", (free_b - leave) >> 20);
    return 1;
  }
  cudaMemGetInfo(&free_b, &total);
  std::printf("holding: %zu MiB left free of %zu MiB\n", free_b >> 20, total >> 20);
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}
