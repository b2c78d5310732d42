// Half copies of a matmul's A and B for the FP16 variants and anchors (MatmulArgs::a16, b16):
// rounded once, rows padded with zeros to a multiple of 8, made before any timing. The cuBLAS
// and CUTLASS FP16 anchors read the very same copies as the hand-written kernel.
#pragma once
#include <cuda_runtime.h>

#include "kernels/matmul/matmul_args.cuh"
#include "runtime/device.hpp"

namespace distancies {

class HalfOperands {
 public:
  // (Re)makes the copies of a.a and a.b; call whenever A or B change.
  void make(const MatmulArgs& a, cudaStream_t s);
  // a with a16 / b16 / lda16 / ldb16 set; throws unless make() saw these very operands.
  MatmulArgs bind(const MatmulArgs& a) const;

 private:
  DeviceBuffer a16_, b16_;
  MatmulArgs made_{};
};

}  // namespace distancies
