// One query at a time without a launch a query: a row's resident kernel (kernels/intersect/
// resident_serve.cuh) started once over a GpuBatch's queries; each answer is then a doorbell write
// to mapped host memory, the kernel's answers written straight back there, and a wait on the
// blocks' done slots. The compacting rows with a resident launcher (IntersectVariant::serve).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "harness/intersect/gpu_intersect.hpp"
#include "runtime/device.hpp"

namespace distancies::intersect {

class ResidentServer {
 public:
  // Launches the kernel on its own stream; Error where the row has no resident kernel or the GPU
  // cannot run one. The batch must outlive the server and not be re-assigned under it.
  ResidentServer(const GpuBatch& batch, const IntersectVariant& v);
  ~ResidentServer();  // stops the kernel (waits at most a few seconds)
  ResidentServer(const ResidentServer&) = delete;
  ResidentServer& operator=(const ResidentServer&) = delete;

  // Query q's answer, ids increasing. Error (one line) if the kernel fails or does not answer
  // within a few seconds, or if the batch changed since the server started.
  std::vector<std::uint32_t> answer(std::size_t q);
  int blocks() const { return blocks_; }
  void stop();  // idempotent; Error if the kernel failed or did not stop

 private:
  void ring(int first_tile, int ntiles, unsigned counts_at, int stop);
  void wait_for_blocks(const char* what);
  const GpuBatch& batch_;
  unsigned generation_;
  PinnedBuffer bell_, answers_;
  ServeBell* bell_host_ = nullptr;
  unsigned* answers_device_ = nullptr;
  cudaStream_t stream_ = nullptr;  // destroyed without a wait: a kernel that did not stop must not hang us
  int blocks_ = 0;
  unsigned seq_ = 0;
  bool running_ = false;
};

}  // namespace distancies::intersect
