// The tuned SIMT SGEMM's shapes and index maps (tuned_sgemm.cuh), shared with the host: the
// registry sizes the launch from TunedSgemmConfig, and tests/test_tuned_sgemm_layout.cpp checks on
// the CPU that each element of C has exactly one owner, that every element of a K slice is copied
// exactly once, and that the warps' shared-memory accesses are free of bank conflicts.
//
// A block computes BM x BN of C in BK-step K slices held in a ring of kStages slices in shared
// memory. A warp owns WM x WN of the block; a thread TM x TN of the warp's tile, as (TM / 4) x
// (TN / 4) blocks of 4 x 4: its blocks sit kLanesM * 4 rows and kLanesN * 4 columns apart, so for
// one step of K the lanes' float4 reads of A (or B) are kLanesM (kLanesN) consecutive float4s.
#pragma once
#include <tuple>

#include "kernels/common/host_device.hpp"

namespace distancies::tuned_sgemm {

// A position in a tile: a row and a column (of C, of a K slice of A as (m, k), of B as (k, n)).
struct At {
  int row, col;
};

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int Stages, int MinBlocks>
struct Config {
  static constexpr int kBM = BM, kBN = BN, kBK = BK, kWM = WM, kWN = WN, kTM = TM, kTN = TN;
  static constexpr int kStages = Stages, kMinBlocks = MinBlocks, kGroup = 8;
  static constexpr int kWarpsN = BN / WN, kThreads = (BM / WM) * kWarpsN * 32;
  static constexpr int kMi = TM / 4, kNi = TN / 4;                  // 4 x 4 blocks a thread
  static constexpr int kLanesM = WM / TM, kLanesN = WN / TN;        // a warp's lanes along M, N
  static constexpr int kAStride = BM + 4;                           // A^T rows: see a_copy
  static constexpr int kAStage = BK * kAStride, kBStage = BK * BN;  // floats a stage
  static constexpr int kSharedBytes = Stages * (kAStage + kBStage) * 4;
  // A is copied 4 bytes at a time (transposed on the way in), 8 consecutive k of kCopyRows rows a
  // pass of the block; B 16 bytes (or 4 on the scalar path) at a time, rows of BN.
  static constexpr int kCopyRows = kThreads / 8;
  static constexpr int kACopies = BM * BK / kThreads, kBCopies16 = BK * BN / 4 / kThreads,
                       kBCopies4 = BK * BN / kThreads;
  static_assert(BM % WM == 0 && BN % WN == 0 && WM % TM == 0 && WN % TN == 0 && TM % 4 == 0 && TN % 4 == 0);
  static_assert(kLanesM * kLanesN == 32, "a warp's lanes tile its warp tile");
  static_assert(kLanesM <= 8 && kLanesN <= 8, "a warp's float4 reads of a row span at most 128 bytes");
  static_assert(BK % 8 == 0 && BM % kCopyRows == 0 && (BK * BN / 4) % kThreads == 0 && BN % 4 == 0);
  static_assert(kThreads % BN == 0, "a thread copies one column of B (both paths) in every slice");
  static_assert(Stages >= 2);
  // Copy p of A is pass p % kAPasses over the rows, of the 8 k at (p / kAPasses) * 8; copy p of B
  // is the same column as copy 0, p * kBStep16 (kBStep4) rows further: the kernel keeps one
  // pointer a thread for each and steps it (the layout test checks these steps).
  static constexpr int kAPasses = BM / kCopyRows, kBStep16 = kThreads / (BN / 4), kBStep4 = kThreads / BN;

  // The thread's first 4 x 4 block in the block tile; block (i, j) is i * kLanesM * 4 rows and
  // j * kLanesN * 4 columns further.
  static constexpr DISTANCIES_HD At thread_origin(int tid) {
    const int warp = tid / 32, lane = tid % 32;
    return {(warp / kWarpsN) * WM + (lane / kLanesN) * 4, (warp % kWarpsN) * WN + (lane % kLanesN) * 4};
  }
  // Element (i, r) x (j, q) of the thread's tile: row r of block row i, column q of block column j.
  static constexpr DISTANCIES_HD At c_element(int tid, int i, int r, int j, int q) {
    const At o = thread_origin(tid);
    return {o.row + i * kLanesM * 4 + r, o.col + j * kLanesN * 4 + q};
  }
  // Copy p of A (m, k) in the slice: a warp's 32 copies are 8 consecutive k (32 bytes of a row)
  // of 4 rows, stored to A^T at k * kAStride + m; the 4 floats of padding put row k + 1 four
  // banks on, so those 32 stores hit 32 banks.
  static constexpr DISTANCIES_HD At a_copy(int tid, int p) {
    return {tid / 8 + (p % (BM / kCopyRows)) * kCopyRows, (p / (BM / kCopyRows)) * 8 + tid % 8};
  }
  static constexpr DISTANCIES_HD int a_shared(At mk) { return mk.col * kAStride + mk.row; }
  // Copy p of B (k, n): 16 bytes, consecutive threads along a row of BN.
  static constexpr DISTANCIES_HD At b_copy16(int tid, int p) {
    const int e = tid + p * kThreads;
    return {e / (BN / 4), (e % (BN / 4)) * 4};
  }
  // The scalar path's copy p of B: 4 bytes.
  static constexpr DISTANCIES_HD At b_copy4(int tid, int p) {
    const int e = tid + p * kThreads;
    return {e / BN, e % BN};
  }
  static constexpr DISTANCIES_HD int b_shared(At kn) { return kn.row * BN + kn.col; }
  // Where the thread's float4 of A block row i (B block column j) is read at step kk of a slice.
  static constexpr DISTANCIES_HD int a_read(int tid, int kk, int i) {
    return kk * kAStride + thread_origin(tid).row + i * kLanesM * 4;
  }
  static constexpr DISTANCIES_HD int b_read(int tid, int kk, int j) {
    return kk * BN + thread_origin(tid).col + j * kLanesN * 4;
  }
};

// The registered configurations (variants/matmul registers a row each; the layout test checks
// each). Why each is here: docs/matmul.md, "tuned_sgemm".
using Registered = std::tuple<Config<128, 128, 16, 64, 32, 8, 8, 3, 2>,   // warp_tiled_sgemm's shape, BK 16, the ring
                              Config<128, 128, 16, 64, 64, 8, 16, 3, 2>,  // 8 x 16 a thread, 4 warps, 2 blocks an SM
                              Config<128, 256, 16, 64, 64, 8, 16, 3, 1>,  // the largest tile: 8 warps, 1 block
                              Config<128, 256, 16, 64, 64, 8, 16, 4, 1>,  // the same, a deeper ring
                              Config<256, 128, 16, 64, 64, 16, 8, 3, 1>,  // its transpose: 16 x 8 a thread
                              Config<128, 256, 8, 64, 64, 8, 16, 4, 1>>;  // half the unrolled loop (BK 8)

}  // namespace distancies::tuned_sgemm
