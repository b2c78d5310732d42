// The Hopper wgmma rows (variants/matmul/wgmma_f16_matmul.cu) on operands built so that a wrong
// layout names itself: with A made of identity blocks, C is B (C[i][j] = B[i % 64][j]); with B
// made of identity blocks, C is A. Each B (A) holds its column or its row index, so a wrong
// element says which index the kernel mixed up, and the message says which part of the kernel
// reads it. Integers below 2,048 are exact in fp16 and in the fp32 sums. 256 x 256 x 64: one
// 64-step slice, two or four tiles of every row's shape. The registry-wide exactness test
// (test_matmul_gpu.cpp) covers ragged shapes; this one is for a first run going wrong.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "harness/matmul/half_operands.hpp"
#include "runtime/cuda_check.hpp"
#include "tests/gpu_skip.hpp"
#include "variants/matmul/registry.hpp"

using namespace distancies;

namespace {

constexpr int kM = 256, kN = 256, kK = 64;
using Fill = std::function<float(int, int)>;

// C of row v for A[i][k] = fa(i, k), B[k][j] = fb(k, j), C poisoned (NaN) first.
std::vector<float> product(const MatmulVariant& v, const Fill& fa, const Fill& fb) {
  std::vector<float> a(kM * kK), b(kK * kN), c(kM * kN);
  for (int i = 0; i < kM; ++i)
    for (int k = 0; k < kK; ++k) a[i * kK + k] = fa(i, k);
  for (int k = 0; k < kK; ++k)
    for (int j = 0; j < kN; ++j) b[k * kN + j] = fb(k, j);
  DeviceBuffer da(a.size() * 4, "A"), db(b.size() * 4, "B"), dc(c.size() * 4, "C");
  CUDA_CHECK(cudaMemcpy(da.get(), a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db.get(), b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dc.get(), 0xFF, c.size() * 4));
  const MatmulArgs args{da.as<float>(), db.as<float>(), dc.as<float>(), kM, kN, kK};
  HalfOperands halves;
  halves.make(args, nullptr);
  v.launch(halves.bind(args), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(c.data(), dc.get(), c.size() * 4, cudaMemcpyDeviceToHost));
  return c;
}

void expect_c(const std::vector<float>& c, const Fill& want, const std::string& who, const std::string& suspect) {
  int bad = 0;
  for (int i = 0; i < kM && bad < 4; ++i)
    for (int j = 0; j < kN && bad < 4; ++j)
      if (!(c[i * kN + j] == want(i, j))) {
        ADD_FAILURE() << who << ": C[" << i << "][" << j << "] = " << c[i * kN + j] << ", want " << want(i, j) << " ("
                      << suspect << ")";
        ++bad;
      }
}

void diagnose(const MatmulVariant& v) {
  const std::string who = v.name;
  const Fill eye_a = [](int i, int k) { return i % kK == k ? 1.0f : 0.0f; };
  const Fill eye_b = [](int k, int j) { return j % kK == k ? 1.0f : 0.0f; };
  const Fill row = [](int i, int) { return float(i); }, col = [](int, int j) { return float(j); };
  // C = B: B's columns, then its rows of K.
  expect_c(product(v, eye_a, col), col, who + ", A = identity blocks, B[k][j] = j",
           "B's columns read from the wrong place: N-major descriptor (leading offset = 64-column box stride), "
           "imm-trans-b, B's TMA box, or the epilogue's columns");
  expect_c(
      product(v, eye_a, [](int k, int) { return float(k); }), [](int i, int) { return float(i % kK); },
      who + ", A = identity blocks, B[k][j] = k",
      "B's rows of K read from the wrong place: stride offset (8 rows of K), the k16 step's advance (16 rows), "
      "or A's K order");
  // C = A: A's rows, then its K.
  expect_c(product(v, row, eye_b), row, who + ", A[i][k] = i, B = identity blocks",
           "A's rows read from the wrong place: K-major stride offset (8 rows), a consumer's rows (64 or 128 a "
           "warpgroup), A's TMA box, or the epilogue's rows");
  expect_c(
      product(
          v, [](int, int k) { return float(k); }, eye_b),
      [](int, int j) { return float(j % kK); }, who + ", A[i][k] = k, B = identity blocks",
      "A's K read from the wrong place: the k16 step's advance in A (32 bytes) or the swizzle");
}

}  // namespace

TEST(WgmmaMatmulGpu, StructuredOperandsNameAWrongLayout) {
  DISTANCIES_REQUIRE_GPU();
  int rows = 0;
  for (const MatmulVariant& v : matmul_variants()) {
    if (!v.needs_sm90a) continue;
    ++rows;
    if (const auto no = matmul_variant_refusal(v)) GTEST_SKIP() << v.name << ": " << no->why;
    diagnose(v);
  }
  EXPECT_GE(rows, 1) << "the wgmma rows are registered";
}

TEST(WgmmaMatmulGpu, OtherDevicesRefuseWithOneLine) {
  DISTANCIES_REQUIRE_GPU();
  const MatmulVariant& v = matmul_variant("wgmma_f16_128x256");
  if (!matmul_variant_refusal(v)) GTEST_SKIP() << "this device runs sm_90a code: nothing to refuse";
  DeviceBuffer da(64, "A"), db(64, "B"), dc(64, "C");
  const MatmulArgs args{da.as<float>(), db.as<float>(), dc.as<float>(), 2, 2, 2};
  HalfOperands halves;
  halves.make(args, nullptr);
  EXPECT_THROW(v.launch(halves.bind(args), nullptr), Error);
}
