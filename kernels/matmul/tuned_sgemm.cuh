// A templated, tunable fp32 SIMT SGEMM (beyond the study; docs/matmul.md, "tuned_sgemm"): a block
// computes BM x BN of C, K in BK-step slices copied by cp.async into a ring of kStages slices in
// shared memory (no staging registers: they go to the accumulators), one barrier a slice; warps
// of WM x WN, a thread TM x TN of fp32 FMA accumulators as 4 x 4 blocks fed by float4 shared
// loads (kernels/matmul/tuned_sgemm_layout.hpp has every index map); blocks in the grouped order.
#pragma once
#include "kernels/common/mma_sync_ptx.cuh"
#include "kernels/matmul/matmul_args.cuh"
#include "kernels/matmul/tile_order.cuh"
#include "kernels/matmul/tuned_sgemm_layout.hpp"

namespace distancies {

namespace tuned_sgemm {

// 4 bytes global -> shared; in == false writes a zero. 4-byte copies can land anywhere, so A is
// transposed on the way in (16-byte copies could not) and needs no alignment at all.
__device__ __forceinline__ void cp_async_4(float* smem, const float* gmem, bool in) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(in ? 4 : 0));
}

// A thread's share of each slice's copies, its pointers and guards set once: A rows a_row,
// a_row + kCopyRows, ... at k = 8 g + tid % 8; B one column, rows kBStep16 (kBStep4) apart.
// Out-of-matrix elements are written as zeros, so the slices' sums need no guards; such a copy
// reads 0 bytes from the matrix's first element (a valid address).
template <class Cfg, bool kVec>
struct SliceCopier {
  static constexpr int kBStep = kVec ? Cfg::kBStep16 : Cfg::kBStep4;
  static constexpr int kBCopies = kVec ? Cfg::kBCopies16 : Cfg::kBCopies4;
  const MatmulArgs& a;
  At a0, b0;           // the thread's copy 0 of A (m, k) and of B (k, n) in a slice
  const float* a_row;  // A(bm + a0.row, a0.col)
  const float* b_col;  // B(b0.row, bn + b0.col)
  int a_pass, b_step;  // floats from one of the thread's rows to its next (< 2^31)
  unsigned a_rows_in;  // bit p: row a0.row + p * kCopyRows is inside A
  bool b_col_in;

  __device__ __forceinline__ SliceCopier(const MatmulArgs& args, int bm, int bn, int tid)
      : a(args), a0(Cfg::a_copy(tid, 0)), b0(kVec ? Cfg::b_copy16(tid, 0) : Cfg::b_copy4(tid, 0)) {
    a_row = a.a + static_cast<long long>(bm + a0.row) * a.k + a0.col;
    b_col = a.b + static_cast<long long>(b0.row) * a.n + bn + b0.col;
    a_pass = Cfg::kCopyRows * a.k;
    b_step = kBStep * a.n;
    a_rows_in = 0;
#pragma unroll
    for (int p = 0; p < Cfg::kAPasses; ++p) a_rows_in |= (bm + a0.row + p * Cfg::kCopyRows < a.m ? 1u : 0u) << p;
    b_col_in = bn + b0.col < a.n;  // kVec: n % 4 == 0, so the whole float4 is
  }

  // Slice kt into ring slot sa, sb (the caller commits the group).
  __device__ __forceinline__ void copy(float* sa, float* sb, int kt) const {
    const int k0 = kt * Cfg::kBK;
#pragma unroll
    for (int g = 0; g < Cfg::kBK / 8; ++g) {
      const bool k_in = k0 + 8 * g + a0.col < a.k;
      const float* src = a_row + k0 + 8 * g;
      float* dst = sa + Cfg::a_shared({a0.row, a0.col + 8 * g});
#pragma unroll
      for (int p = 0; p < Cfg::kAPasses; ++p, src += a_pass) {
        const bool in = k_in && (a_rows_in >> p & 1u);
        cp_async_4(dst + p * Cfg::kCopyRows, in ? src : a.a, in);
      }
    }
    const float* src = b_col + static_cast<long long>(k0) * a.n;
    float* dst = sb + Cfg::b_shared(b0);
#pragma unroll
    for (int p = 0; p < kBCopies; ++p, src += b_step) {
      const bool in = b_col_in && k0 + b0.row + p * kBStep < a.k;
      if constexpr (kVec)
        ptx::cp_async_16(dst + p * kBStep * Cfg::kBN, in ? src : a.b, in);
      else
        cp_async_4(dst + p * kBStep * Cfg::kBN, in ? src : a.b, in);
    }
  }
};

// One slice: per step of K, kMi + kNi float4 shared loads for TM * TN FMAs.
template <class Cfg>
__device__ __forceinline__ void multiply_slice(const float* sa, const float* sb, int tid,
                                               float (&acc)[Cfg::kTM][Cfg::kTN]) {
#pragma unroll
  for (int kk = 0; kk < Cfg::kBK; ++kk) {
    float ra[Cfg::kTM], rb[Cfg::kTN];
#pragma unroll
    for (int i = 0; i < Cfg::kMi; ++i) {
      const float4 v = *reinterpret_cast<const float4*>(sa + Cfg::a_read(tid, kk, i));
      ra[4 * i] = v.x, ra[4 * i + 1] = v.y, ra[4 * i + 2] = v.z, ra[4 * i + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < Cfg::kNi; ++j) {
      const float4 v = *reinterpret_cast<const float4*>(sb + Cfg::b_read(tid, kk, j));
      rb[4 * j] = v.x, rb[4 * j + 1] = v.y, rb[4 * j + 2] = v.z, rb[4 * j + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < Cfg::kTM; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::kTN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
  }
}

// C from the accumulators: a float4 per row of a 4 x 4 block where the path is vectorised and the
// four columns are inside C, scalar guarded stores otherwise.
template <class Cfg, bool kVec>
__device__ __forceinline__ void store_c(const MatmulArgs& a, int bm, int bn, int tid,
                                        const float (&acc)[Cfg::kTM][Cfg::kTN]) {
#pragma unroll
  for (int i = 0; i < Cfg::kMi; ++i)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int row = bm + Cfg::c_element(tid, i, r, 0, 0).row;
      if (row >= a.m) continue;
      float* crow = a.c + static_cast<long long>(row) * a.n;
#pragma unroll
      for (int j = 0; j < Cfg::kNi; ++j) {
        const int col = bn + Cfg::c_element(tid, i, r, j, 0).col;
        const float* v = &acc[4 * i + r][4 * j];
        if (kVec && col + 3 < a.n) {
          *reinterpret_cast<float4*>(crow + col) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
#pragma unroll
          for (int q = 0; q < 4; ++q)
            if (col + q < a.n) crow[col + q] = v[q];
        }
      }
    }
}

}  // namespace tuned_sgemm

// kVec: n is a multiple of 4 and B and C start on 16 bytes (the launcher checks), so B's rows are
// copied and C's stored a float4 at a time; otherwise 4 bytes at a time, guarded. A is always
// copied 4 bytes at a time, so k may be anything. The ring: slice kt + kStages - 1 is copied
// into the slot slice kt - 1 used, after the barrier that says every warp is done with it.
// cp.async needs sm_80: older targets get a body that traps (the launcher refuses them first).
template <class Cfg, bool kVec>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) tuned_sgemm_kernel(MatmulArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();
#else
  using namespace tuned_sgemm;
  extern __shared__ __align__(16) float tuned_shared[];
  float* sa = tuned_shared;                                // [stage][kBK][kAStride]: A^T
  float* sb = tuned_shared + Cfg::kStages * Cfg::kAStage;  // [stage][kBK][kBN]
  const int tid = threadIdx.x;
  const TileCoord tile = grouped_tile((a.m + Cfg::kBM - 1) / Cfg::kBM, (a.n + Cfg::kBN - 1) / Cfg::kBN, Cfg::kGroup);
  const int bm = tile.m * Cfg::kBM, bn = tile.n * Cfg::kBN;
  const int ktiles = (a.k + Cfg::kBK - 1) / Cfg::kBK;

  const SliceCopier<Cfg, kVec> copier(a, bm, bn, tid);
#pragma unroll
  for (int s = 0; s < Cfg::kStages - 1; ++s) {
    if (s < ktiles) copier.copy(sa + s * Cfg::kAStage, sb + s * Cfg::kBStage, s);
    ptx::cp_async_commit();  // empty groups too: the count of groups is what wait_group reads
  }
  float acc[Cfg::kTM][Cfg::kTN];
#pragma unroll
  for (int i = 0; i < Cfg::kTM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::kTN; ++j) acc[i][j] = 0.0f;

  int slot = 0;  // kt % kStages
  for (int kt = 0; kt < ktiles; ++kt) {
    ptx::cp_async_wait<Cfg::kStages - 2>();  // this thread's copies of slice kt have landed
    __syncthreads();                         // everyone's have, and slot kt - 1 is free
    const int next = kt + Cfg::kStages - 1;
    const int next_slot = slot == 0 ? Cfg::kStages - 1 : slot - 1;
    if (next < ktiles) copier.copy(sa + next_slot * Cfg::kAStage, sb + next_slot * Cfg::kBStage, next);
    ptx::cp_async_commit();
    multiply_slice<Cfg>(sa + slot * Cfg::kAStage, sb + slot * Cfg::kBStage, tid, acc);
    slot = slot + 1 == Cfg::kStages ? 0 : slot + 1;
  }
  ptx::cp_async_wait<0>();  // only empty groups remain; nothing may be in flight at exit
  store_c<Cfg, kVec>(a, bm, bn, tid, acc);
#endif
}

}  // namespace distancies
