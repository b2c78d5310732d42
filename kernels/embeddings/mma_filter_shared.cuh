// The filtered scan's many-query shape (sm_90): 8 warps a block, each holding one tile of 16
// queries' A fragments in registers for the whole depth (kChunks 32-column chunks), all of them
// multiplying the same 16-row units of the model, which one bulk copy (TMA) a unit brings into a
// ring shared by the block. The chunk walk (mma_filter_scan_kernel) reads each query fragment
// from shared memory for every two MMAs and keeps every warp's rows half-read; here a unit is
// read from DRAM or L2 once for 128 queries and the only shared-memory loads are the rows'.
#pragma once
#include "kernels/common/bulk_copy_ptx.cuh"
#include "kernels/embeddings/mma_filter_scan.cuh"

namespace distancies {

namespace filter_scan {

constexpr int kSharedStages = 4;
// The ring: kSharedStages units of 16 rows as they lie in global memory, one bulk copy a unit.
// (Rows padded so that fragment loads avoid bank conflicts, one bulk copy a row, measured slower:
// docs/batch.md.)
__host__ __device__ constexpr std::size_t shared_ring_smem(int ldg) {
  return static_cast<std::size_t>(kSharedStages) * 16 * ldg * 2;
}

}  // namespace filter_scan

// Slot s of the ring is full when its bulk copy completed (`full[s]`, one arrival with the
// bytes) and empty when every warp is done with it (`empty[s]`, kWarps arrivals); thread 0
// refills it. Units: u = part, part + parts, ... of FilterScanArgs' 16-row units.
template <int kChunks, bool kSample>
__global__ void __launch_bounds__(filter_scan::kWarps * 32, 2) mma_filter_shared_kernel(FilterScanArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();
#else
  using namespace filter_scan;
  constexpr int S = kSharedStages;
  extern __shared__ uint4 shared_ring[];  // [S][16 rows][ldg / 8]
  __shared__ unsigned long long full[S], empty[S];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int pieces = a.ldg / 8, rs = pieces;
  const int qgroup = static_cast<int>(blockIdx.x) % a.qgroups;
  const long long part = blockIdx.x / a.qgroups, parts = gridDim.x / a.qgroups;
  const int q0 = (qgroup * kWarps + warp) * 16;  // this warp's 16 queries
  const bool idle = q0 >= a.nq;                  // past the batch: only keeps the ring turning

  // The warp's A fragments (mma_fragments.hpp), zero past the batch and past the row.
  uint4 qa[kChunks][2];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int col = c * 32 + mma_fragments::lane_column(lane);
    uint4 lo = make_uint4(0, 0, 0, 0), hi = lo;
    if (col < a.ldg) {
      if (q0 + g < a.nq) lo = *reinterpret_cast<const uint4*>(a.queries + static_cast<long long>(q0 + g) * a.ldg + col);
      if (q0 + g + 8 < a.nq)
        hi = *reinterpret_cast<const uint4*>(a.queries + static_cast<long long>(q0 + g + 8) * a.ldg + col);
    }
#pragma unroll
    for (int step = 0; step < 2; ++step) {
      unsigned f[4];
      mma_fragments::a_fragment(step, lo, hi, f);
      qa[c][step] = make_uint4(f[0], f[1], f[2], f[3]);
    }
  }
  unsigned floor_key[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int q = q0 + g + 8 * h;
    floor_key[h] = q >= a.nq ? ~0u : kSample ? 0u : a.thresholds[q];
  }

  const long long units = a.groups;
  auto unit_row = [&](long long u) { return u * a.stride * 16; };
  if (threadIdx.x == 0) {
    for (int i = 0; i < S; ++i) ptx::mbarrier_init(full + i, 1), ptx::mbarrier_init(empty + i, kWarps);
    ptx::fence_mbarrier_init();
  }
  __syncthreads();
  auto fill = [&](long long u, int slot) {  // thread 0
    const long long row0 = unit_row(u);
    const long long n = a.rows - row0 < 16 ? a.rows - row0 : 16;  // rows past the model: never read
    ptx::bulk_copy_to_shared(shared_ring + slot * 16 * rs, a.model + row0 * a.ldg,
                             static_cast<unsigned>(n * pieces * 16), full + slot);
  };
  if (threadIdx.x == 0)
    for (int i = 0; i < S; ++i)
      if (part + i * parts < units) fill(part + i * parts, i);

  int slot = 0;
  unsigned phase = 0;  // bit s: the parity slot s completes next
  for (long long u = part; u < units; u += parts) {
    const long long row0 = unit_row(u);
    float inv[2][2];  // rows r, r + 1 of each 8-row tile (r = row0 + 8 n + 2 t), read while the unit lands
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const long long r = row0 + n * 8 + mma_fragments::c_row(lane, h);
        inv[n][h] = !idle && r < a.rows ? __ldg(a.inv_norms + r) : 0.0f;
      }
    ptx::mbarrier_wait(full + slot, (phase >> slot) & 1u);
    if (!idle) {
      float acc[2][2][4];  // [8-row tile][k-step parity]: four independent MMA chains
#pragma unroll
      for (int n = 0; n < 2; ++n)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[n][h][e] = 0.0f;
      const uint4* rows = shared_ring + slot * 16 * rs + g * rs + t;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        const bool in = 4 * c + t < pieces;  // columns past the row: zero
#pragma unroll
        for (int n = 0; n < 2; ++n) {
          const uint4 rw = in ? rows[n * 8 * rs + 4 * c] : make_uint4(0, 0, 0, 0);
#pragma unroll
          for (int step = 0; step < 2; ++step) {
            unsigned bf[2];
            mma_fragments::b_fragment(step, rw, bf);
            const unsigned f[4] = {qa[c][step].x, qa[c][step].y, qa[c][step].z, qa[c][step].w};
            ptx::mma_m16n8k16(acc[n][step], f, bf[0], bf[1]);
          }
        }
      }
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(empty + slot);
#pragma unroll
      for (int n = 0; n < 2; ++n) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const long long row = row0 + n * 8 + mma_fragments::c_row(lane, e);
          if (row >= a.rows) continue;
          offer<kSample>(a, acc[n][0][e] + acc[n][1][e], inv[n][e & 1], floor_key[e >> 1],
                         q0 + mma_fragments::c_query(lane, e), static_cast<int>(row),
                         u * 16 + n * 8 + mma_fragments::c_row(lane, e));
        }
      }
    } else if (lane == 0) {
      ptx::mbarrier_arrive(empty + slot);
    }
    // Thread 0 refills the slot with unit u + S parts once every warp is done with it; its warp
    // waits for it (the MMAs need the warp converged).
    if (threadIdx.x == 0 && u + S * parts < units) {
      ptx::mbarrier_wait(empty + slot, (phase >> slot) & 1u);
      fill(u + S * parts, slot);
    }
    __syncwarp();
    phase ^= 1u << slot;
    slot = slot + 1 == S ? 0 : slot + 1;
  }
#endif
}

}  // namespace distancies
