#include "harness/matmul/cublas_matmul.hpp"

#include <cublas_v2.h>

#include "harness/matmul/half_operands.hpp"
#include "runtime/cublas_check.hpp"
#include "runtime/cuda_check.hpp"

namespace distancies {

const char* cublas_mode_name(CublasMode m) {
  return m == CublasMode::Sgemm ? "cublas_sgemm" : m == CublasMode::Tf32 ? "cublas_tf32" : "cublas_f16";
}

struct CublasMatmul::Impl {
  CublasHandle handle;
  HalfOperands halves;
  // cuBLAS's recommended workspace on Hopper (cublasSetWorkspace); cublasSetStream drops it, so
  // every call sets it again.
  DeviceBuffer workspace{std::size_t(32) << 20, "cuBLAS workspace"};
};

CublasMatmul::CublasMatmul() : impl_(new Impl) {}
CublasMatmul::~CublasMatmul() { delete impl_; }

void CublasMatmul::prepare(const MatmulArgs& a, CublasMode mode, cudaStream_t s) {
  if (mode == CublasMode::F16) impl_->halves.make(a, s);
}

// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (B, A) with n and m swapped.
void CublasMatmul::run(const MatmulArgs& a, CublasMode mode, cudaStream_t s) {
  cublasHandle_t h = impl_->handle.get();
  cublas_check(cublasSetStream(h, s), "cublasSetStream");
  cublas_check(cublasSetWorkspace(h, impl_->workspace.get(), impl_->workspace.bytes()), "cublasSetWorkspace");
  const float one = 1.0f, zero = 0.0f;
  if (mode == CublasMode::Sgemm) {
    cublas_check(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");  // fp32 FMA, never TF32
    cublas_check(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &one, a.b, a.n, a.a, a.k, &zero, a.c, a.n),
                 "cublasSgemm");
    return;
  }
  cublas_check(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  if (mode == CublasMode::Tf32) {
    cublas_check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &one, a.b, CUDA_R_32F, a.n, a.a, CUDA_R_32F,
                              a.k, &zero, a.c, CUDA_R_32F, a.n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (TF32)");
    return;
  }
  const MatmulArgs p = impl_->halves.bind(a);  // throws unless prepare() saw these operands
  cublas_check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &one, p.b16, CUDA_R_16F, p.ldb16, p.a16,
                            CUDA_R_16F, p.lda16, &zero, a.c, CUDA_R_32F, a.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx (FP16)");
}

}  // namespace distancies
