// The result download of a one-query search as a kernel instead of copy-engine transfers: three
// small copies (similarities, rows, status flag) cost more than the GPU writing them straight
// into pinned host memory (mapped: under unified addressing its host pointer is valid on the
// device), a measurable share of the 8-bit pipeline's time. (The query's upload stays a copy:
// passing it in a launch's parameters measured slower.)
#pragma once
#include "kernels/common/dependent_launch.cuh"
#include "kernels/common/launch.hpp"

namespace distancies {

// sims/rows[0..kk) and, when status is given, the status flag, into pinned host memory.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    deliver_result_kernel(const float* sims, const int* rows, const int* status, int kk, float* host_sims,
                          int* host_rows, int* host_status) {
  wait_for_prerequisites();  // launched as a dependent of the last stage
  const int i = blockIdx.x * kThreads + threadIdx.x;
  if (i < kk) {
    host_sims[i] = sims[i];
    host_rows[i] = rows[i];
  }
  if (i == 0 && status) *host_status = *status;
}

}  // namespace distancies
