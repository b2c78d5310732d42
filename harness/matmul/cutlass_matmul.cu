#include "harness/matmul/cutlass_matmul.hpp"

#include <string>

#include "runtime/cuda_check.hpp"
#include "runtime/error.hpp"

#if DISTANCIES_HAVE_CUTLASS
#include <cutlass/gemm/device/gemm.h>
#endif

namespace distancies {

const char* cutlass_mode_name(CutlassMode m) { return m == CutlassMode::SimtF32 ? "cutlass_simt_f32" : "cutlass_f16"; }
MatmulPrecision cutlass_precision(CutlassMode m) {
  return m == CutlassMode::SimtF32 ? MatmulPrecision::F32 : MatmulPrecision::F16;
}

#if DISTANCIES_HAVE_CUTLASS
namespace {

using RowMajor = cutlass::layout::RowMajor;
using SimtF32 = cutlass::gemm::device::Gemm<float, RowMajor, float, RowMajor, float, RowMajor, float,
                                            cutlass::arch::OpClassSimt, cutlass::arch::Sm80>;
using TensorF16 = cutlass::gemm::device::Gemm<cutlass::half_t, RowMajor, cutlass::half_t, RowMajor, float, RowMajor,
                                              float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80>;

// k is the product's K as CUTLASS sees it: its tensor-core kernel walks K in steps that must
// keep 16-byte alignment, so the FP16 call runs K to lda16 over the copies' zero padding.
template <class Gemm, class T>
void run_gemm(const MatmulArgs& a, int k, const T* pa, int lda, const T* pb, int ldb, const char* name,
              cudaStream_t s) {
  typename Gemm::Arguments args({a.m, a.n, k}, {pa, lda}, {pb, ldb}, {a.c, a.n}, {a.c, a.n}, {1.0f, 0.0f});
  Gemm gemm;
  cutlass::Status st = Gemm::can_implement(args);
  if (st == cutlass::Status::kSuccess) st = gemm.initialize(args, nullptr, s);  // no split-K: no workspace
  if (st == cutlass::Status::kSuccess) st = gemm(s);
  if (st != cutlass::Status::kSuccess)
    throw Error(std::string(name) + ": CUTLASS refused " + std::to_string(a.m) + " x " + std::to_string(a.n) + " x " +
                std::to_string(a.k) + " (" + cutlassGetStatusString(st) + ")");
  CUDA_CHECK_LAUNCH();
}

}  // namespace

bool cutlass_available() { return true; }

void cutlass_matmul(const MatmulArgs& a, CutlassMode mode, cudaStream_t s) {
  if (a.m == 0 || a.n == 0) return;
  if (mode == CutlassMode::SimtF32) {
    run_gemm<SimtF32>(a, a.k, a.a, a.k, a.b, a.n, cutlass_mode_name(mode), s);
    return;
  }
  if (!a.a16 || !a.b16) throw Error("cutlass_f16: needs the half copies of A and B (MatmulArgs::a16, b16)");
  run_gemm<TensorF16>(a, a.lda16, reinterpret_cast<const cutlass::half_t*>(a.a16), a.lda16,
                      reinterpret_cast<const cutlass::half_t*>(a.b16), a.ldb16, cutlass_mode_name(mode), s);
}
#else
bool cutlass_available() { return false; }

void cutlass_matmul(const MatmulArgs&, CutlassMode mode, cudaStream_t) {
  throw Error(
      std::string(cutlass_mode_name(mode)) +
      ": built without the CUTLASS headers (pip install -r scripts/requirements.txt into .venv, then reconfigure)");
}
#endif

}  // namespace distancies
