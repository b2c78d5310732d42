#include "harness/matmul/cublaslt_matmul.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/matmul/half_operands.hpp"
#include "runtime/cublas_check.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/error.hpp"

namespace distancies {

const char* cublaslt_mode_name(CublasLtMode m) {
  return m == CublasLtMode::F16         ? "cublaslt_f16_best"
         : m == CublasLtMode::F16OutF16 ? "cublaslt_f16_out16_best"
                                        : "cublaslt_tf32_best";
}
MatmulPrecision cublaslt_precision(CublasLtMode m) {
  return m == CublasLtMode::Tf32 ? MatmulPrecision::TF32 : MatmulPrecision::F16;
}
int cublaslt_output_bits(CublasLtMode m) { return m == CublasLtMode::F16OutF16 ? 16 : 32; }

namespace {

template <class T, cublasStatus_t (*Destroy)(T)>
struct LtDelete {
  void operator()(T p) const { Destroy(p); }
};
using DescPtr = std::unique_ptr<cublasLtMatmulDescOpaque_t, LtDelete<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>>;
using LayoutPtr =
    std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LtDelete<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>>;
using PrefPtr = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t,
                                LtDelete<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>>;

LayoutPtr layout(cudaDataType t, int rows, int cols, int ld) {
  cublasLtMatrixLayout_t l = nullptr;
  cublas_check(cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld), "cublasLtMatrixLayoutCreate");
  return LayoutPtr(l);
}

// One problem as cuBLASLt sees it. Row-major C = A B is column-major C^T = B^T A^T: cuBLASLt's
// first operand is B (n x k, ld ldb), its second A (k x m, ld lda), C is n x m (ld ldc).
struct Problem {
  DescPtr desc;
  LayoutPtr first, second, c;
  const void *pa = nullptr, *pb = nullptr;
  void* pc = nullptr;
  int k = 0;
};

Problem make_problem(const MatmulArgs& a, CublasLtMode mode, int k, void* c, int ldc) {
  const bool half_in = mode != CublasLtMode::Tf32;
  const cudaDataType in = half_in ? CUDA_R_16F : CUDA_R_32F;
  const cudaDataType out = mode == CublasLtMode::F16OutF16 ? CUDA_R_16F : CUDA_R_32F;
  const cublasComputeType_t compute = half_in ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
  cublasLtMatmulDesc_t d = nullptr;
  cublas_check(cublasLtMatmulDescCreate(&d, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  Problem p;
  p.desc.reset(d);
  const int lda = half_in ? a.lda16 : a.k, ldb = half_in ? a.ldb16 : a.n;
  p.first = layout(in, a.n, k, ldb);
  p.second = layout(in, k, a.m, lda);
  p.c = layout(out, a.n, a.m, ldc);
  p.pb = half_in ? static_cast<const void*>(a.b16) : a.b;
  p.pa = half_in ? static_cast<const void*>(a.a16) : a.a;
  p.pc = c;
  p.k = k;
  return p;
}

template <class T>
T algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T v{};
  std::size_t written = 0;
  cublas_check(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &written),
               "cublasLtMatmulAlgoConfigGetAttribute");
  return v;
}

}  // namespace

struct CublasLtBest::Impl {
  cublasLtHandle_t lt = nullptr;
  DeviceBuffer workspace{kWorkspaceBytes, "cuBLASLt workspace"};
  HalfOperands halves;
  DeviceBuffer c16;
  int ldc16 = 0;
  MatmulArgs made{};
  CublasLtMode mode = CublasLtMode::F16;
  Problem chosen;
  cublasLtMatmulAlgo_t algo{};
  void* out_c = nullptr;  // a.c, or c16 for F16OutF16
  int out_ld = 0;
  CublasLtChoice choice;
  bool ready = false;

  cublasStatus_t matmul(const Problem& p, const cublasLtMatmulAlgo_t& al, cudaStream_t s) const {
    const float one = 1.0f, zero = 0.0f;  // beta 0: C is only written
    return cublasLtMatmul(lt, p.desc.get(), &one, p.pb, p.first.get(), p.pa, p.second.get(), &zero, p.pc, p.c.get(),
                          p.pc, p.c.get(), &al, workspace.get(), workspace.bytes(), s);
  }
  std::vector<cublasLtMatmulHeuristicResult_t> candidates(const Problem& p) const;
  double time_ms(const Problem& p, const cublasLtMatmulAlgo_t& al, cudaStream_t s) const;
  void tune(int k, cudaStream_t s, bool exact_k);
};

std::vector<cublasLtMatmulHeuristicResult_t> CublasLtBest::Impl::candidates(const Problem& p) const {
  cublasLtMatmulPreference_t raw = nullptr;
  cublas_check(cublasLtMatmulPreferenceCreate(&raw), "cublasLtMatmulPreferenceCreate");
  const PrefPtr pref(raw);
  const std::size_t ws = workspace.bytes();
  cublas_check(cublasLtMatmulPreferenceSetAttribute(raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
               "cublasLtMatmulPreferenceSetAttribute (workspace)");
  if (mode == CublasLtMode::F16OutF16) {
    // Split-K partials in fp32 only (never in the fp16 output type): the same sums as the rest.
    const std::uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    cublas_check(
        cublasLtMatmulPreferenceSetAttribute(raw, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof(mask)),
        "cublasLtMatmulPreferenceSetAttribute (reduction)");
  }
  std::vector<cublasLtMatmulHeuristicResult_t> r(kCandidates);
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, p.desc.get(), p.first.get(), p.second.get(), p.c.get(),
                                                           p.c.get(), raw, kCandidates, r.data(), &found);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) return {};  // none at this K: prepare() refuses if no K has one
  cublas_check(st, "cublasLtMatmulAlgoGetHeuristic");
  r.resize(std::max(found, 0));
  return r;
}

// The median of a few calls after one warm-up; 0 when cuBLASLt refuses the algorithm.
double CublasLtBest::Impl::time_ms(const Problem& p, const cublasLtMatmulAlgo_t& al, cudaStream_t s) const {
  if (matmul(p, al, s) != CUBLAS_STATUS_SUCCESS) return 0;
  Event a, b;
  std::vector<float> ms;
  for (int i = 0; i < 5; ++i) {
    a.record(s);
    cublas_check(matmul(p, al, s), "cublasLtMatmul (set-up timing)");
    b.record(s);
    CUDA_CHECK(cudaEventSynchronize(b.get()));
    ms.push_back(elapsed_ms(a, b));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Times the heuristic's candidates at this K and keeps the fastest so far (its K and algorithm).
void CublasLtBest::Impl::tune(int k, cudaStream_t s, bool exact_k) {
  const Problem p = make_problem(made, mode, k, out_c, out_ld);
  const auto cands = candidates(p);
  double best_here = 0;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (cands[i].state != CUBLAS_STATUS_SUCCESS || cands[i].workspaceSize > workspace.bytes()) continue;
    const double ms = time_ms(p, cands[i].algo, s);
    if (ms <= 0) continue;
    ++choice.candidates;
    if (exact_k && i == 0) choice.first_choice_ms = ms;
    if (best_here == 0 || ms < best_here) best_here = ms;
    if (choice.ms > 0 && ms >= choice.ms) continue;
    choice.ms = ms;
    choice.rank = static_cast<int>(i);
    choice.k_run = k;
    choice.workspace_used = cands[i].workspaceSize;
    algo = cands[i].algo;
  }
  (exact_k ? choice.best_exact_k_ms : choice.best_padded_k_ms) = best_here;
}

CublasLtBest::CublasLtBest() : impl_(new Impl) {
  try {
    cublas_check(cublasLtCreate(&impl_->lt), "cublasLtCreate");
  } catch (...) {
    delete impl_;  // the destructor does not run for a constructor that throws
    throw;
  }
}
CublasLtBest::~CublasLtBest() {
  cublasLtDestroy(impl_->lt);
  delete impl_;
}

const CublasLtChoice& CublasLtBest::prepare(const MatmulArgs& a, CublasLtMode mode, cudaStream_t s) {
  if (a.m == 0 || a.n == 0 || a.k == 0) throw Error(std::string(cublaslt_mode_name(mode)) + ": an empty product");
  Impl& im = *impl_;
  im.ready = false;
  im.mode = mode;
  im.choice = CublasLtChoice{};
  MatmulArgs args = a;
  if (mode != CublasLtMode::Tf32) {
    im.halves.make(a, s);
    args = im.halves.bind(a);
  }
  im.made = args;
  im.out_c = a.c;
  im.out_ld = a.n;
  if (mode == CublasLtMode::F16OutF16) {
    im.ldc16 = matmul_half_ld(a.n);  // 16-byte rows, like the inputs
    im.c16 = DeviceBuffer(std::max<std::size_t>(1, std::size_t(a.m) * im.ldc16) * 2, "cuBLASLt half C");
    im.out_c = im.c16.get();
    im.out_ld = im.ldc16;
  }
  im.tune(a.k, s, true);
  // FP16: K rounded up to 8 reads the copies' zero columns of A and zero rows of B (exact).
  if (mode != CublasLtMode::Tf32 && args.lda16 != a.k) im.tune(args.lda16, s, false);
  if (im.choice.ms <= 0)
    throw Error(std::string(cublaslt_mode_name(mode)) + ": cuBLASLt found no algorithm for " + std::to_string(a.m) +
                " x " + std::to_string(a.n) + " x " + std::to_string(a.k));
  im.chosen = make_problem(args, mode, im.choice.k_run, im.out_c, im.out_ld);
  im.choice.algo_id = algo_attr<std::int32_t>(im.algo, CUBLASLT_ALGO_CONFIG_ID);
  im.choice.tile_id = static_cast<int>(algo_attr<std::uint32_t>(im.algo, CUBLASLT_ALGO_CONFIG_TILE_ID));
  im.choice.stages_id = static_cast<int>(algo_attr<std::uint32_t>(im.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID));
  im.choice.splitk = algo_attr<std::int32_t>(im.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  im.choice.cluster_id = algo_attr<std::uint16_t>(im.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  CUDA_CHECK(cudaStreamSynchronize(s));
  im.ready = true;
  return im.choice;
}

void CublasLtBest::run(const MatmulArgs& a, cudaStream_t s) {
  const Impl& im = *impl_;
  const MatmulArgs& m = im.made;
  if (!im.ready || m.a != a.a || m.b != a.b || m.c != a.c || m.m != a.m || m.n != a.n || m.k != a.k)
    throw Error(std::string(cublaslt_mode_name(im.mode)) + ": not prepared for these operands (call prepare first)");
  cublas_check(im.matmul(im.chosen, im.algo, s), "cublasLtMatmul");
}

const CublasLtChoice& CublasLtBest::choice() const { return impl_->choice; }
const __half* CublasLtBest::half_c() const { return impl_->c16.as<__half>(); }
int CublasLtBest::ldc16() const { return impl_->ldc16; }

}  // namespace distancies
