// The FP16 tensor-core matmul (beyond the study): half inputs, fp32 accumulators, mma.sync
// m16n8k16. A block computes BM x BN of C with WARPS_M x WARPS_N warps; slices of BK steps of K
// flow through a STAGES-deep cp.async pipeline in shared memory (STAGES - 1 slices in flight
// while one is multiplied), read into fragments by ldmatrix. Rows of the shared slices are
// padded by 16 bytes so ldmatrix's 8 rows fall on 8 distinct bank groups.
#pragma once
#include "kernels/common/mma_sync_ptx.cuh"
#include "kernels/matmul/matmul_args.cuh"
#include "kernels/matmul/tile_order.cuh"

namespace distancies {

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES>
struct MmaF16Config {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kStages = STAGES;
  static constexpr int kThreads = 32 * WARPS_M * WARPS_N;
  static constexpr int kWarpM = BM / WARPS_M, kWarpN = BN / WARPS_N;  // a warp's tile of C
  static constexpr int kMi = kWarpM / 16, kNi = kWarpN / 8;           // its m16 x n8 tiles
  static constexpr int kAStride = BK + 8, kBStride = BN + 8;          // halves a shared row
  static constexpr int kAStage = BM * kAStride, kBStage = BK * kBStride;
  static constexpr int kSharedBytes = STAGES * (kAStage + kBStage) * 2;
  static constexpr int kGroup = 8;  // tile rows a group (tile_order.cuh)
  static_assert(kWarpM % 16 == 0 && kWarpN % 16 == 0 && BK % 16 == 0,
                "whole m16n8k16 tiles, B read 16 columns at a time");
  static_assert((BM * BK / 8) % kThreads == 0 && (BK * BN / 8) % kThreads == 0, "whole 16-byte chunks a thread");
};

// Reads a.a16 / a.b16 (half, rows padded to lda16 / ldb16, zeros beyond k and n): a 16-byte
// chunk that starts inside a row is wholly readable, so only whole chunks are guarded.
// cp.async and mma.sync m16n8k16 need sm_80: older targets get a body that traps (the launcher
// refuses those devices first).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) mma_f16_matmul_kernel(MatmulArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();
#else
  constexpr int kBM = Cfg::kBM, kBN = Cfg::kBN, kBK = Cfg::kBK, kStages = Cfg::kStages, kThreads = Cfg::kThreads;
  constexpr int kAStride = Cfg::kAStride, kBStride = Cfg::kBStride, kAStage = Cfg::kAStage, kBStage = Cfg::kBStage;
  constexpr int kMi = Cfg::kMi, kNi = Cfg::kNi;
  constexpr int kAChunksRow = kBK / 8, kBChunksRow = kBN / 8;
  extern __shared__ __align__(16) unsigned char shared_raw[];
  __half* sa = reinterpret_cast<__half*>(shared_raw);  // [stage][kBM][kAStride]
  __half* sb = sa + kStages * kAStage;                 // [stage][kBK][kBStride]
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const TileCoord tile = grouped_tile((a.m + kBM - 1) / kBM, (a.n + kBN - 1) / kBN, Cfg::kGroup);
  const int bm = tile.m * kBM, bn = tile.n * kBN;
  const int wm = (warp / (kBN / Cfg::kWarpN)) * Cfg::kWarpM, wn = (warp % (kBN / Cfg::kWarpN)) * Cfg::kWarpN;
  const int ktiles = (a.k + kBK - 1) / kBK;

  // A thread copies the same column chunk of kAChunks rows of A and kBChunks rows of B every
  // slice (the thread count is a multiple of a row's chunks): row pointers and guards once.
  constexpr int kAChunks = kBM * kAChunksRow / kThreads, kBChunks = kBK * kBChunksRow / kThreads;
  static_assert(kThreads % kAChunksRow == 0 && kThreads % kBChunksRow == 0, "a thread keeps its column chunk");
  // Rows a thread copies are kThreads / chunks-a-row apart: one base pointer each for A and B.
  const int a_ch = (tid % kAChunksRow) * 8, b_ch = (tid % kBChunksRow) * 8;
  const int a_row0 = tid / kAChunksRow, b_row0 = tid / kBChunksRow;
  constexpr int kARowStep = kThreads / kAChunksRow, kBRowStep = kThreads / kBChunksRow;
  const __half* a_base = a.a16 + static_cast<long long>(bm + a_row0) * a.lda16 + a_ch;
  const bool b_col_in = bn + b_ch < a.n;
  const __half* b_base = a.b16 + static_cast<long long>(b_row0) * a.ldb16 + (b_col_in ? bn + b_ch : 0);
  auto load_stage = [&](int stage, int kt, int part = 0, int parts = 1) {
    const int k0 = kt * kBK;
    __half* da = sa + stage * kAStage + a_row0 * kAStride + a_ch;
    __half* db = sb + stage * kBStage + b_row0 * kBStride + b_ch;
    const bool a_k_in = k0 + a_ch < a.k;
#pragma unroll
    for (int i = 0; i < kAChunks; ++i) {
      if (i % parts != part) continue;
      const bool in = a_k_in && bm + a_row0 + i * kARowStep < a.m;
      ptx::cp_async_16(da + i * kARowStep * kAStride,
                       in ? a_base + static_cast<long long>(i * kARowStep) * a.lda16 + k0 : a.a16, in);
    }
#pragma unroll
    for (int i = 0; i < kBChunks; ++i) {
      if (i % parts != part) continue;
      const int r = b_row0 + i * kBRowStep;
      const bool in = b_col_in && k0 + r < a.k;
      ptx::cp_async_16(db + i * kBRowStep * kBStride,
                       in ? b_base + static_cast<long long>(k0 + i * kBRowStep) * a.ldb16 : a.b16, in);
    }
  };

  float acc[kMi][kNi][4];
#pragma unroll
  for (int i = 0; i < kMi; ++i)
#pragma unroll
    for (int j = 0; j < kNi; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.0f;

  // Fragments double-buffered: the next step's ldmatrix is issued before this step's mma.sync
  // (the asm is volatile, so program order is issue order), and at a slice's last step the
  // next slice's first fragments come from the next stage, after the barrier that says it landed.
  constexpr int kSteps = kBK / 16;
  static_assert(kSteps % 2 == 0, "a slice ends on fragment buffer 1, so the next starts on 0");
  unsigned af[2][kMi][4], bf[2][kNi / 2][4];
  auto load_fragments = [&](int buf, int stage, int kk) {
    const __half* ta = sa + stage * kAStage;
    const __half* tb = sb + stage * kBStage;
#pragma unroll
    for (int i = 0; i < kMi; ++i)
      ptx::ldmatrix_x4(af[buf][i], ta + (wm + i * 16 + lane % 16) * kAStride + kk + (lane / 16) * 8);
#pragma unroll
    for (int j = 0; j < kNi / 2; ++j)  // two n8 tiles each: regs {0,1} columns +0..7, {2,3} +8..15
      ptx::ldmatrix_x4_trans(bf[buf][j], tb + (kk + lane % 16) * kBStride + wn + j * 16 + (lane / 16) * 8);
  };

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ktiles) load_stage(s, s);
    ptx::cp_async_commit();  // empty groups too: the waits count groups
  }
  ptx::cp_async_wait<kStages - 2>();  // slice 0 has landed (for this thread) ...
  __syncthreads();                    // ... for every thread
  load_fragments(0, 0, 0);
  for (int kt = 0; kt < ktiles; ++kt) {
    const int stage = kt % kStages;
    // Refill the stage slice kt - 1 used (every warp read it before the last barrier), its
    // copies spread over the steps but the last (as CUTLASS's multistage mainloop does), so
    // they queue in small groups beside the fragment loads.
    const int next = kt + kStages - 1;
#pragma unroll
    for (int step = 0; step < kSteps; ++step) {
      const int cur = step % 2;
      if (step < kSteps - 1 && next < ktiles) load_stage(next % kStages, next, step, kSteps - 1);
      if (step == kSteps - 2) ptx::cp_async_commit();
      if (step == kSteps - 1) {
        ptx::cp_async_wait<kStages - 2>();  // slice kt + 1 has landed
        __syncthreads();
        if (kt + 1 < ktiles) load_fragments(cur ^ 1, (kt + 1) % kStages, 0);
      } else {
        load_fragments(cur ^ 1, stage, (step + 1) * 16);
      }
#pragma unroll
      for (int i = 0; i < kMi; ++i)
#pragma unroll
        for (int jj = 0; jj < kNi; ++jj) {
          const int j = i % 2 ? kNi - 1 - jj : jj;  // serpentine: consecutive mma share an operand
          ptx::mma_m16n8k16(acc[i][j], af[cur][i], bf[cur][j / 2][(j % 2) * 2], bf[cur][j / 2][(j % 2) * 2 + 1]);
        }
    }
  }
  ptx::cp_async_wait<0>();

  // Accumulator q of tile (i, j): row lane / 4 (+ 8 for q >= 2), column 2 (lane % 4) + q % 2.
  const bool pairs = (a.n % 2 == 0) && (reinterpret_cast<unsigned long long>(a.c) % 8 == 0);
#pragma unroll
  for (int i = 0; i < kMi; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = bm + wm + i * 16 + lane / 4 + h * 8;
      if (r >= a.m) continue;
      float* crow = a.c + static_cast<long long>(r) * a.n;
#pragma unroll
      for (int j = 0; j < kNi; ++j) {
        const int c = bn + wn + j * 8 + (lane % 4) * 2;
        const float v0 = acc[i][j][h * 2], v1 = acc[i][j][h * 2 + 1];
        if (pairs && c + 1 < a.n) {
          *reinterpret_cast<float2*>(crow + c) = make_float2(v0, v1);
        } else {
          if (c < a.n) crow[c] = v0;
          if (c + 1 < a.n) crow[c + 1] = v1;
        }
      }
    }
#endif
}

}  // namespace distancies
