// cuBLAS calls are checked like CUDA calls: an allocation failure (its workspace, its handle)
// is OutOfMemory like any other, anything else one Error line naming the call.
#pragma once
#include <cublas_v2.h>

#include <memory>
#include <string>

#include "runtime/cuda_check.hpp"

namespace distancies {

inline void cublas_check(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw_out_of_memory(MemoryKind::Device, std::string("cuBLAS, in ") + what, 0);
  throw Error(std::string("cuBLAS: ") + cublasGetStatusName(st) + " (" + cublasGetStatusString(st) + ") in " + what);
}

// Owning cuBLAS handle.
class CublasHandle {
 public:
  CublasHandle() {
    cublasHandle_t h = nullptr;
    cublas_check(cublasCreate(&h), "cublasCreate");
    h_.reset(h);
  }
  cublasHandle_t get() const { return h_.get(); }

 private:
  struct Destroy {
    void operator()(cublasHandle_t h) const { cublasDestroy(h); }
  };
  std::unique_ptr<cublasContext, Destroy> h_;
};

}  // namespace distancies
