// Programmatic dependent launch (Hopper): a kernel launched with launch_dependent() may be
// scheduled before the kernel ahead of it in the stream has finished, and waits on the device
// (wait_for_prerequisites) before it reads that kernel's results, so the gap between two
// kernels of a search (launch latency, 2-4 us) is hidden behind the first one's tail. The
// kernel ahead calls allow_dependents() to let that happen early. Both are no-ops before sm_90
// and when the launch was an ordinary one.
#pragma once

namespace distancies {

__device__ __forceinline__ void allow_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

__device__ __forceinline__ void wait_for_prerequisites() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

}  // namespace distancies
