// The library anchors of the matmul study (docs/matmul.md): cuBLAS in fp32 (SGEMM, no TF32),
// TF32 tensor cores and FP16 tensor cores with fp32 accumulation, on the same row-major
// operands as the study's kernels.
#pragma once
#include <cuda_runtime.h>

#include "kernels/matmul/matmul_args.cuh"
#include "runtime/device.hpp"

namespace distancies {

enum class CublasMode { Sgemm, Tf32, F16 };
const char* cublas_mode_name(CublasMode m);

class CublasMatmul {
 public:
  CublasMatmul();
  ~CublasMatmul();
  CublasMatmul(const CublasMatmul&) = delete;
  CublasMatmul& operator=(const CublasMatmul&) = delete;
  // F16: converts the operands to half (untimed by the caller); call it whenever A or B change.
  void prepare(const MatmulArgs& a, CublasMode mode, cudaStream_t s);
  // F16 runs on the halves prepare() made for these very operands (pointers and shape), else
  // throws: a buffer freed and reallocated at the same address must not pass for prepared.
  void run(const MatmulArgs& a, CublasMode mode, cudaStream_t s);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace distancies
