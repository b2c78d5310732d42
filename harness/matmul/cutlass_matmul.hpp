// The CUTLASS anchors of the matmul study (docs/matmul.md), from the headers of the
// `nvidia-cutlass` wheel (scripts/requirements.txt): CUTLASS's own SIMT fp32 SGEMM and its
// Ampere-style FP16 tensor-core GEMM (mma.sync, multistage), default tile configurations,
// on the same row-major operands (F16: the HalfOperands copies, K run to their padded lda16
// because CUTLASS's K steps must stay 16-byte aligned) as the study's kernels.
#pragma once
#include <cuda_runtime.h>

#include "kernels/matmul/matmul_args.cuh"

namespace distancies {

enum class CutlassMode { SimtF32, F16 };
const char* cutlass_mode_name(CutlassMode m);
MatmulPrecision cutlass_precision(CutlassMode m);

// False when the build found no CUTLASS headers (then cutlass_matmul throws, saying so).
bool cutlass_available();

// C = A B. Throws an Error naming CUTLASS's status when it refuses the problem (the FP16
// kernel needs n a multiple of 4 for its vector stores of C) or when F16 lacks a16 / b16.
void cutlass_matmul(const MatmulArgs& a, CutlassMode mode, cudaStream_t s);

}  // namespace distancies
