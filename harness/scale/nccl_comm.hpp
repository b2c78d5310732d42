// An NCCL communicator over a process group, one GPU per process. libnccl.so.2 (the
// nvidia-nccl-cu13 wheel's, or the system's) is opened at run time, so every other command runs
// on machines without NCCL; nccl.h comes from that wheel at build time (CMake looks in .venv).
// NVLink multicast (NVLS) is switched off before the communicator forms: docs/scale.md says why.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>

#include "harness/scale/bootstrap.hpp"

namespace distancies {

class NcclComm {
 public:
  // Forms the communicator of `g` on the current device: rank 0 makes the id and hands it out
  // over its TCP rendezvous (g.rendezvous, g.token), the others fetch it. Error (one line) when NCCL cannot be opened
  // or fails.
  explicit NcclComm(const ProcessGroup& g);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const { return group_.rank; }
  int size() const { return group_.size; }
  // Every rank's `bytes` at `send` (device memory), gathered in rank order into `recv`
  // (size() * bytes, device memory), enqueued on `s`.
  void all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t s);
  // Waits for `s` (an all-gather enqueued on it), watching the communicator: an NCCL error, or
  // no completion within the group's collective_timeout_s (a rank died or stalled), ends the
  // process with one error line (exit 1). Never waits forever.
  void wait(cudaStream_t s);
  std::string version() const;

 private:
  struct Api;
  ProcessGroup group_;
  std::unique_ptr<Api> api_;
  void* comm_ = nullptr;
};

// Whether NCCL can be used here, and if not why (the library is missing, or this build has no
// nccl.h): for tests and fixtures to skip with the reason.
bool nccl_available(std::string* why = nullptr);

}  // namespace distancies
