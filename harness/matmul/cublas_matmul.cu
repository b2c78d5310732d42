#include "harness/matmul/cublas_matmul.hpp"

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include "harness/runtime/cublas_check.hpp"
#include "harness/runtime/cuda_check.hpp"

namespace distancies {
namespace {

__global__ void to_half(const float* in, __half* out, long long n) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) out[i] = __float2half_rn(in[i]);
}

}  // namespace

const char* cublas_mode_name(CublasMode m) {
  return m == CublasMode::Sgemm ? "cublas_sgemm" : m == CublasMode::Tf32 ? "cublas_tf32" : "cublas_f16";
}

struct CublasMatmul::Impl {
  CublasHandle handle;
  DeviceBuffer a16, b16;
  MatmulArgs prepared{};  // the operands the halves were made from
};

CublasMatmul::CublasMatmul() : impl_(new Impl) {}
CublasMatmul::~CublasMatmul() { delete impl_; }

void CublasMatmul::prepare(const MatmulArgs& a, CublasMode mode, cudaStream_t s) {
  if (mode != CublasMode::F16) return;
  const long long na = static_cast<long long>(a.m) * a.k, nb = static_cast<long long>(a.k) * a.n;
  impl_->a16 = DeviceBuffer(static_cast<std::size_t>(na) * 2, "half A");
  impl_->b16 = DeviceBuffer(static_cast<std::size_t>(nb) * 2, "half B");
  to_half<<<1024, 256, 0, s>>>(a.a, impl_->a16.as<__half>(), na);
  CUDA_CHECK_LAUNCH();
  to_half<<<1024, 256, 0, s>>>(a.b, impl_->b16.as<__half>(), nb);
  CUDA_CHECK_LAUNCH();
  impl_->prepared = a;
}

// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS gets (B, A) with n and m swapped.
void CublasMatmul::run(const MatmulArgs& a, CublasMode mode, cudaStream_t s) {
  cublasHandle_t h = impl_->handle.get();
  cublas_check(cublasSetStream(h, s), "cublasSetStream");
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
  const MatmulArgs& p = impl_->prepared;
  if (p.a != a.a || p.b != a.b || p.m != a.m || p.n != a.n || p.k != a.k)
    throw Error("cublas_f16: the operands were not prepared (call CublasMatmul::prepare after changing A or B)");
  cublas_check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, a.n, a.m, a.k, &one, impl_->b16.get(), CUDA_R_16F, a.n,
                            impl_->a16.get(), CUDA_R_16F, a.k, &zero, a.c, CUDA_R_32F, a.n, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx (FP16)");
}

}  // namespace distancies
