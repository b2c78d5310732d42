// The Hopper wgmma rows (variants/matmul/wgmma_f16_matmul.cu) on operands built so that a wrong
// layout names itself: with A made of identity blocks, C is B (C[i][j] = B[i % 64][j], summed over
// K's 64-step slices); with B made of identity blocks, C is A. Each B (A) holds its column or its
// row index, so a wrong element says which index the kernel mixed up, and the message says which
// part of the kernel reads it. Operands below 2,048 are exact in fp16 and the integer sums in fp32.
// 256 x 256 x 64: one 64-step slice, two or four tiles of every row's shape; the cluster rows (`_c2`)
// also at 384 x 256 x 576 (an odd number of tile rows, the rings wrapped). The registry-wide
// exactness test (test_matmul_gpu.cpp) covers ragged shapes; this one is for a first run going
// wrong. The ping-pong rows (`pingpong`) run on grids capped to one block and to two
// (DISTANCIES_WGMMA_BLOCKS), so each block walks several tiles and both consumer warpgroups
// take turns: odd and even tile counts, the rings wrapped.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "harness/matmul/half_operands.hpp"
#include "runtime/cuda_check.hpp"
#include "tests/gpu_skip.hpp"
#include "variants/matmul/registry.hpp"

using namespace distancies;

namespace {

struct Shape {
  int m, n, k;
};
// One 64-step slice, two or four tiles of every row's shape (one tile unit or two of the cluster
// rows).
constexpr Shape kSquare{256, 256, 64};
// The cluster rows also on an odd number of 128-row tiles (the phantom tile past the last one,
// which must store nothing) and nine slices (the 4- and 6-stage rings wrap twice, each stage
// freed by the consumers of both blocks).
constexpr Shape kOddRows{384, 256, 9 * 64};
// The ping-pong rows' walk: 10 tiles of 64 x 256, 9 of 128 x 128 (ragged in both), five slices.
constexpr Shape kPingpongWalk{320, 384, 5 * 64};
using Fill = std::function<float(int, int)>;

// C of row v for A[i][k] = fa(i, k), B[k][j] = fb(k, j), C poisoned (NaN) first.
std::vector<float> product(const MatmulVariant& v, const Shape& sh, const Fill& fa, const Fill& fb) {
  std::vector<float> a(std::size_t(sh.m) * sh.k), b(std::size_t(sh.k) * sh.n), c(std::size_t(sh.m) * sh.n);
  for (int i = 0; i < sh.m; ++i)
    for (int k = 0; k < sh.k; ++k) a[std::size_t(i) * sh.k + k] = fa(i, k);
  for (int k = 0; k < sh.k; ++k)
    for (int j = 0; j < sh.n; ++j) b[std::size_t(k) * sh.n + j] = fb(k, j);
  DeviceBuffer da(a.size() * 4, "A"), db(b.size() * 4, "B"), dc(c.size() * 4, "C");
  CUDA_CHECK(cudaMemcpy(da.get(), a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(db.get(), b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dc.get(), 0xFF, c.size() * 4));
  const MatmulArgs args{da.as<float>(), db.as<float>(), dc.as<float>(), sh.m, sh.n, sh.k};
  HalfOperands halves;
  halves.make(args, nullptr);
  v.launch(halves.bind(args), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(c.data(), dc.get(), c.size() * 4, cudaMemcpyDeviceToHost));
  return c;
}

void expect_c(const std::vector<float>& c, const Shape& sh, const Fill& want, const std::string& who,
              const std::string& suspect) {
  int bad = 0;
  for (int i = 0; i < sh.m && bad < 4; ++i)
    for (int j = 0; j < sh.n && bad < 4; ++j)
      if (!(c[std::size_t(i) * sh.n + j] == want(i, j))) {
        ADD_FAILURE() << who << ": C[" << i << "][" << j << "] = " << c[std::size_t(i) * sh.n + j] << ", want "
                      << want(i, j) << " (" << suspect << ")";
        ++bad;
      }
}

bool cluster_row(const MatmulVariant& v) {
  const std::string name = v.name;
  return name.size() > 3 && name.compare(name.size() - 3, 3, "_c2") == 0;
}

// Identity blocks of side 64 in every 64-step slice of K (sh.k a multiple of 64), so every slice
// counts: C is the sum over the slices, each index times `slices` plus the slices' offsets of K.
// Every operand below 2,048 (exact in fp16), every sum exact in fp32.
void diagnose(const MatmulVariant& v, const Shape& sh) {
  const std::string who =
      std::string(v.name) + " at " + std::to_string(sh.m) + " x " + std::to_string(sh.n) + " x " + std::to_string(sh.k);
  const int slices = sh.k / 64;
  const float k_offsets = 64.0f * float(slices * (slices - 1) / 2);  // sum of 64 s over the slices
  const Fill eye_a = [](int i, int k) { return i % 64 == k % 64 ? 1.0f : 0.0f; };
  const Fill eye_b = [](int k, int j) { return j % 64 == k % 64 ? 1.0f : 0.0f; };
  const Fill row = [](int i, int) { return float(i); }, col = [](int, int j) { return float(j); };
  const Fill row_s = [=](int i, int) { return float(slices * i); },
             col_s = [=](int, int j) { return float(slices * j); };
  const std::string cluster = cluster_row(v) ? "; a cluster row: also the peer's half of B (its multicast, the cta "
                                               "mask, the boxes each block copies) or a stage overwritten early"
                                             : "";
  // C = B: B's columns, then its rows of K.
  expect_c(product(v, sh, eye_a, col), sh, col_s, who + ", A = identity blocks, B[k][j] = j",
           "B's columns read from the wrong place: N-major descriptor (leading offset = 64-column box stride), "
           "imm-trans-b, B's TMA box, or the epilogue's columns" +
               cluster);
  expect_c(
      product(v, sh, eye_a, [](int k, int) { return float(k); }), sh,
      [=](int i, int) { return float(slices * (i % 64)) + k_offsets; }, who + ", A = identity blocks, B[k][j] = k",
      "B's rows of K read from the wrong place: stride offset (8 rows of K), the k16 step's advance (16 rows), "
      "or A's K order" +
          cluster);
  // C = A: A's rows, then its K.
  expect_c(product(v, sh, row, eye_b), sh, row_s, who + ", A[i][k] = i, B = identity blocks",
           "A's rows read from the wrong place: K-major stride offset (8 rows), a consumer's rows (64 or 128 a "
           "warpgroup), A's TMA box, the epilogue's rows, or (a cluster row) which tile of the pair a block owns");
  expect_c(
      product(
          v, sh, [](int, int k) { return float(k); }, eye_b),
      sh, [=](int, int j) { return float(slices * (j % 64)) + k_offsets; }, who + ", A[i][k] = k, B = identity blocks",
      "A's K read from the wrong place: the k16 step's advance in A (32 bytes) or the swizzle");
}

bool pingpong_row(const MatmulVariant& v) { return std::string(v.name).find("pingpong") != std::string::npos; }

// The persistent grid capped to `blocks` while it lives (the launch reads the variable).
struct BlocksCap {
  explicit BlocksCap(int blocks) { setenv("DISTANCIES_WGMMA_BLOCKS", std::to_string(blocks).c_str(), 1); }
  ~BlocksCap() { unsetenv("DISTANCIES_WGMMA_BLOCKS"); }
  BlocksCap(const BlocksCap&) = delete;
  BlocksCap& operator=(const BlocksCap&) = delete;
};

// A ping-pong row with several tiles a block: a wrong turn, ring place or tile of a warpgroup
// shows as another tile's values (or a trap: a wait past 10 s).
void diagnose_pingpong(const MatmulVariant& v) {
  for (int blocks : {1, 2}) {
    SCOPED_TRACE(std::string("DISTANCIES_WGMMA_BLOCKS=") + std::to_string(blocks) +
                 ": a wrong value here and not at the full grid: the consumers' tiles, turns or ring places");
    const BlocksCap cap(blocks);
    diagnose(v, kPingpongWalk);
    if (blocks == 1) diagnose(v, kOddRows);
  }
}

}  // namespace

TEST(WgmmaMatmulGpu, StructuredOperandsNameAWrongLayout) {
  DISTANCIES_REQUIRE_GPU();
  int rows = 0;
  for (const MatmulVariant& v : matmul_variants()) {
    if (!v.needs_sm90a) continue;
    ++rows;
    if (const auto no = matmul_variant_refusal(v)) GTEST_SKIP() << v.name << ": " << no->why;
    diagnose(v, kSquare);
    if (cluster_row(v)) diagnose(v, kOddRows);
    if (pingpong_row(v)) diagnose_pingpong(v);
  }
  EXPECT_GE(rows, 1) << "the wgmma rows are registered";
}

TEST(WgmmaMatmulGpu, OtherDevicesRefuseWithOneLine) {
  DISTANCIES_REQUIRE_GPU();
  if (!matmul_variant_refusal(matmul_variant("wgmma_f16_128x256")))
    GTEST_SKIP() << "this device runs sm_90a code: nothing to refuse";
  DeviceBuffer da(64, "A"), db(64, "B"), dc(64, "C");
  const MatmulArgs args{da.as<float>(), db.as<float>(), dc.as<float>(), 2, 2, 2};
  HalfOperands halves;
  halves.make(args, nullptr);
  for (const MatmulVariant& v : matmul_variants()) {
    if (!v.needs_sm90a) continue;
    EXPECT_TRUE(matmul_variant_refusal(v)) << v.name;
    EXPECT_THROW(v.launch(halves.bind(args), nullptr), Error) << v.name;
  }
}
