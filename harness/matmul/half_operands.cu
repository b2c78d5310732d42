#include "harness/matmul/half_operands.hpp"

#include <algorithm>

#include "kernels/matmul/half_operands.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/error.hpp"

namespace distancies {
namespace {

void pad_to_half(const float* in, __half* out, int rows, int cols, int out_rows, int ld, cudaStream_t s) {
  const long long total = static_cast<long long>(out_rows) * ld;
  if (total == 0) return;
  const int blocks = static_cast<int>(std::min<long long>((total + 255) / 256, 4096));
  pad_to_half_kernel<<<blocks, 256, 0, s>>>(in, out, rows, cols, out_rows, ld);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void HalfOperands::make(const MatmulArgs& a, cudaStream_t s) {
  const int lda = matmul_half_ld(a.k), ldb = matmul_half_ld(a.n);
  // At least one element each, so the kernels' zero-fill copies always have a valid address.
  a16_ = DeviceBuffer(std::max<std::size_t>(1, static_cast<std::size_t>(a.m) * lda) * 2, "half A");
  b16_ = DeviceBuffer(std::max<std::size_t>(1, static_cast<std::size_t>(lda) * ldb) * 2, "half B");
  pad_to_half(a.a, a16_.as<__half>(), a.m, a.k, a.m, lda, s);
  pad_to_half(a.b, b16_.as<__half>(), a.k, a.n, lda, ldb, s);  // zero rows k .. lda - 1
  made_ = a;
}

MatmulArgs HalfOperands::bind(const MatmulArgs& a) const {
  if (made_.a != a.a || made_.b != a.b || made_.m != a.m || made_.n != a.n || made_.k != a.k || !a16_.get())
    throw Error(
        "FP16 matmul: the half copies were not made for these operands (call HalfOperands::make after changing A or "
        "B)");
  MatmulArgs out = a;
  out.a16 = a16_.as<__half>();
  out.b16 = b16_.as<__half>();
  out.lda16 = matmul_half_ld(a.k);
  out.ldb16 = matmul_half_ld(a.n);
  return out;
}

}  // namespace distancies
