// Every registered matmul variant (a loop over the table: a new row is tested by itself) and the
// cuBLAS, cuBLASLt and CUTLASS anchors against the fp64 product, within each precision's bound
// (docs/matmul.md), on shapes that are not multiples of any tile, K = 1, tiny and non-square
// shapes, K long enough to fill the tensor-core pipeline, more tile rows than a group, and more
// tiles than SMs.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "harness/matmul/cublas_matmul.hpp"
#include "harness/matmul/cublaslt_matmul.hpp"
#include "harness/matmul/cutlass_matmul.hpp"
#include "harness/matmul/half_operands.hpp"
#include "harness/matmul/matmul_host.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/error.hpp"
#include "tests/gpu_skip.hpp"
#include "variants/matmul/registry.hpp"

using namespace distancies;

namespace {

// {2100, 2100, 72}: more tiles than an H100's 132 SMs at every wgmma tile shape, so a persistent
// block walks several (its ring's turns carry over from one tile to the next).
const std::array<int, 3> kShapes[] = {{1, 1, 1},        {3, 5, 7},       {17, 33, 1},     {33, 17, 65},
                                      {100, 1, 300},    {1, 100, 300},   {129, 131, 257}, {512, 64, 512},
                                      {300, 260, 1000}, {1153, 136, 40}, {64, 8, 4},      {2100, 2100, 72}};

struct Operands {
  int m, n, k;
  std::vector<float> a, b;
  DeviceBuffer da, db, dc;
  HalfOperands halves;
  Fp64Product ref;
  Operands(int m_, int n_, int k_) : m(m_), n(n_), k(k_), a(random_matrix(m_, k_, 11)), b(random_matrix(k_, n_, 12)) {
    da = DeviceBuffer(a.size() * 4, "A");
    db = DeviceBuffer(b.size() * 4, "B");
    dc = DeviceBuffer(static_cast<std::size_t>(m) * n * 4, "C");
    CUDA_CHECK(cudaMemcpy(da.get(), a.data(), a.size() * 4, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(db.get(), b.data(), b.size() * 4, cudaMemcpyHostToDevice));
    ref = fp64_matmul(a.data(), b.data(), m, n, k);
    halves.make(args(), nullptr);
  }
  MatmulArgs args() const { return {da.as<float>(), db.as<float>(), dc.as<float>(), m, n, k}; }
  MatmulArgs args(MatmulPrecision p) const { return p == MatmulPrecision::F16 ? halves.bind(args()) : args(); }
  // Checks C within factor * (|A||B|)_ij; a NaN sentinel catches elements never written.
  void expect_within(double factor, const std::string& who) const {
    std::vector<float> c(static_cast<std::size_t>(m) * n);
    CUDA_CHECK(cudaMemcpy(c.data(), dc.get(), c.size() * 4, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (std::size_t i = 0; i < c.size() && bad < 3; ++i)
      if (!(std::fabs(c[i] - ref.c[i]) <= factor * ref.abs_c[i])) {
        ADD_FAILURE() << who << " " << m << "x" << n << "x" << k << ": C[" << i << "] = " << c[i] << ", fp64 "
                      << ref.c[i] << ", bound " << factor * ref.abs_c[i];
        ++bad;
      }
  }
  void poison() const { CUDA_CHECK(cudaMemset(dc.get(), 0xFF, static_cast<std::size_t>(m) * n * 4)); }  // NaN
};

// Rows this device cannot run (sm_90a code off compute capability 9.0) are skipped, each named
// once with the reason.
bool runs_here(const MatmulVariant& v) {
  const auto no = matmul_variant_refusal(v);
  static std::set<std::string> said;
  if (no && said.insert(v.name).second) std::cout << "[ SKIPPED ROW ] " << v.name << ": " << no->why << std::endl;
  return !no;
}

}  // namespace

TEST(MatmulGpu, EveryRegisteredVariantMatchesTheFp64Product) {
  DISTANCIES_REQUIRE_GPU();
  ASSERT_GE(matmul_variants().size(), 36u + 7u) << "the study's two sweeps are registered";
  for (const auto& [m, n, k] : kShapes) {
    const Operands o(m, n, k);
    for (const MatmulVariant& v : matmul_variants()) {
      if (!runs_here(v)) continue;
      o.poison();
      v.launch(o.args(v.precision), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      o.expect_within(matmul_error_factor(v.precision, k), v.name);
    }
  }
}

TEST(MatmulGpu, CublasAnchorsWithinTheirOwnBounds) {
  DISTANCIES_REQUIRE_GPU();
  CublasMatmul blas;
  for (const auto& [m, n, k] : kShapes) {
    const Operands o(m, n, k);
    for (auto [mode, p] : {std::pair{CublasMode::Sgemm, MatmulPrecision::F32},
                           {CublasMode::Tf32, MatmulPrecision::TF32},
                           {CublasMode::F16, MatmulPrecision::F16}}) {
      o.poison();
      blas.prepare(o.args(), mode, nullptr);
      blas.run(o.args(), mode, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      o.expect_within(matmul_error_factor(p, k), cublas_mode_name(mode));
    }
  }
}

namespace {

// fp16 C: the fp32 result rounded once more, relative half an fp16 ulp (2^-11), absolute half the
// smallest subnormal's spacing (2^-25) below fp16's normal range.
void expect_half_c_within(const Operands& o, const CublasLtBest& lt, double factor, const std::string& who) {
  std::vector<__half> h(static_cast<std::size_t>(o.m) * lt.ldc16());
  CUDA_CHECK(cudaMemcpy(h.data(), lt.half_c(), h.size() * 2, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < o.m && bad < 3; ++i)
    for (int j = 0; j < o.n && bad < 3; ++j) {
      const std::size_t at = static_cast<std::size_t>(i) * o.n + j;
      const double c = __half2float(h[static_cast<std::size_t>(i) * lt.ldc16() + j]);
      const double bound = factor * o.ref.abs_c[at] + std::ldexp(std::fabs(o.ref.c[at]), -11) + std::ldexp(1.0, -25);
      if (!(std::fabs(c - o.ref.c[at]) <= bound)) {
        ADD_FAILURE() << who << " " << o.m << "x" << o.n << "x" << o.k << ": C[" << at << "] = " << c << ", fp64 "
                      << o.ref.c[at] << ", bound " << bound;
        ++bad;
      }
    }
}

}  // namespace

TEST(MatmulGpu, CublasLtBestAnchorsWithinTheirOwnBounds) {
  DISTANCIES_REQUIRE_GPU();
  CublasLtBest lt;
  for (const auto& [m, n, k] : kShapes) {
    const Operands o(m, n, k);
    for (CublasLtMode mode : {CublasLtMode::F16, CublasLtMode::F16OutF16, CublasLtMode::Tf32}) {
      const std::string who = cublaslt_mode_name(mode);
      o.poison();
      const CublasLtChoice c = lt.prepare(o.args(), mode, nullptr);
      EXPECT_GE(c.candidates, 1) << who;
      EXPECT_GE(c.rank, 0) << who;
      EXPECT_LT(c.rank, CublasLtBest::kCandidates) << who;
      EXPECT_LE(c.workspace_used, CublasLtBest::kWorkspaceBytes) << who;
      EXPECT_GT(c.ms, 0) << who;
      const bool half_in = mode != CublasLtMode::Tf32;
      EXPECT_TRUE(c.k_run == k || (half_in && c.k_run == matmul_half_ld(k))) << who << ": K " << c.k_run;
      EXPECT_GT(c.best_exact_k_ms, 0) << who;
      if (half_in && k % 8 != 0) {
        EXPECT_GT(c.best_padded_k_ms, 0) << who << ": K rounded to 8 is tried too";
      }
      o.poison();  // the set-up's calls wrote C: the timed call must write it again
      lt.run(o.args(), nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      const double factor = matmul_error_factor(cublaslt_precision(mode), k);
      if (mode == CublasLtMode::F16OutF16)
        expect_half_c_within(o, lt, factor, who);
      else
        o.expect_within(factor, who);
    }
  }
}

TEST(MatmulGpu, CublasLtBestRefusesOperandsItDidNotPrepare) {
  DISTANCIES_REQUIRE_GPU();
  CublasLtBest lt;
  const Operands a(8, 8, 8), b(9, 9, 9);
  EXPECT_THROW(lt.run(a.args(), nullptr), Error) << "nothing prepared yet";
  lt.prepare(a.args(), CublasLtMode::F16, nullptr);
  EXPECT_THROW(lt.run(b.args(), nullptr), Error);
  EXPECT_NO_THROW(lt.run(a.args(), nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
}

TEST(MatmulGpu, CutlassAnchorsWithinTheirOwnBoundsOrRefuse) {
  DISTANCIES_REQUIRE_GPU();
  if (!cutlass_available()) GTEST_SKIP() << "built without the CUTLASS headers (pip install nvidia-cutlass into .venv)";
  for (const auto& [m, n, k] : kShapes) {
    const Operands o(m, n, k);
    for (CutlassMode mode : {CutlassMode::SimtF32, CutlassMode::F16}) {
      o.poison();
      const MatmulArgs args = o.args(cutlass_precision(mode));
      // The FP16 kernel stores C four floats at a time: other widths are refused, never wrong.
      if (mode == CutlassMode::F16 && n % 4 != 0) {
        EXPECT_THROW(cutlass_matmul(args, mode, nullptr), Error) << m << "x" << n << "x" << k;
        continue;
      }
      cutlass_matmul(args, mode, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      o.expect_within(matmul_error_factor(cutlass_precision(mode), k), cutlass_mode_name(mode));
    }
  }
}

TEST(MatmulGpu, Fp16VariantsRefuseArgsWithoutHalfCopies) {
  DISTANCIES_REQUIRE_GPU();
  const Operands o(16, 16, 16);
  int f16_rows = 0;
  for (const MatmulVariant& v : matmul_variants()) {
    if (v.precision != MatmulPrecision::F16) continue;
    ++f16_rows;
    EXPECT_THROW(v.launch(o.args(), nullptr), Error) << v.name;
  }
  EXPECT_GE(f16_rows, 1) << "the tensor-core row is registered";
  HalfOperands other;
  EXPECT_THROW(other.bind(o.args()), Error) << "copies made for other operands (or none) never pass";
}

TEST(MatmulGpu, Fp16AnchorRefusesOperandsItDidNotPrepare) {
  DISTANCIES_REQUIRE_GPU();
  CublasMatmul blas;
  const Operands a(8, 8, 8), b(9, 9, 9);
  blas.prepare(a.args(), CublasMode::F16, nullptr);
  EXPECT_THROW(blas.run(b.args(), CublasMode::F16, nullptr), Error);
  EXPECT_NO_THROW(blas.run(a.args(), CublasMode::F16, nullptr));
  CUDA_CHECK(cudaDeviceSynchronize());
}

TEST(MatmulGpu, ResourcesAreReportedForEveryVariant) {
  DISTANCIES_REQUIRE_GPU();
  for (const MatmulVariant& v : matmul_variants()) {
    if (!runs_here(v)) continue;
    const MatmulResources r = matmul_resources(v);
    EXPECT_GT(r.registers, 0) << v.name;
    EXPECT_GE(r.local_bytes, 0) << v.name;
    EXPECT_GE(r.blocks_per_sm, 1) << v.name << ": a block of its threads and shared memory must fit on an SM";
    EXPECT_EQ(r.dynamic_shared_bytes, v.dynamic_shared_bytes) << v.name;
    EXPECT_GT(r.occupancy, 0.0) << v.name;
    EXPECT_LE(r.occupancy, 1.0) << v.name;
  }
  // The largest register tile spills: 1,024 accumulators a thread cannot live in 255 registers.
  EXPECT_GT(matmul_resources(matmul_variant("register_tile_32x32")).local_bytes, 0);
}
