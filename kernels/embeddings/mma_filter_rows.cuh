// The filtered scan's small-batch shape: a warp copies whole 8-row tiles (contiguous bytes) into
// its ring and multiplies each against the block's queries over the full depth. The chunk-major
// walk of mma_filter_scan_kernel keeps every warp's rows half-read for the length of a row block,
// and with thousands of warps those half-read 256-byte L2 blocks outgrow L2: 25 % more bytes came
// from DRAM than the model holds (ncu, B = 16). Here a tile's bytes are fetched at once and used
// within one tile's time. For few queries (the scan is memory-bound); more queries per block
// want the chunk walk's register-resident row fragments.
#pragma once
#include "kernels/common/bulk_copy_ptx.cuh"
#include "kernels/embeddings/mma_filter_scan.cuh"

namespace distancies {

namespace filter_scan {

// A row of a ring slot in 16-byte pieces: the row's, plus one so that the 8 rows of a fragment
// load fall in different banks.
__host__ __device__ constexpr int rows_slot_stride(int ldg) { return ldg / 8 + 1; }
__host__ __device__ constexpr std::size_t rows_ring_smem(int ldg) {
  return static_cast<std::size_t>(kWarps) * kStages * 8 * rows_slot_stride(ldg) * 16;
}

}  // namespace filter_scan

// kMTiles x 16 queries a block (their A fragments in shared memory, as mma_filter_scan_kernel
// lays them); tiles of 8 rows: tile j is rows 16 (j / 2) stride + 8 (j % 2) .. + 7 (the
// 16-row units of FilterScanArgs), warp w of the grid's W takes tiles w, w + W, ... Lanes copy
// pieces of a tile other lanes read: cp.async.wait_group, then __syncwarp, orders them. On sm_90
// lane 0 moves the whole tile with one bulk copy (TMA) instead, its completion an mbarrier a slot:
// per-lane copies of 16 bytes left the scan at 1.9 TB/s (ncu, B = 16), too few bytes in flight.
template <int kMTiles, bool kSample>
__global__ void __launch_bounds__(filter_scan::kWarps * 32) mma_filter_rows_kernel(FilterScanArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();
#else
  using namespace filter_scan;
  extern __shared__ uint4 rows_smem[];
  uint4* qfrag = rows_smem;  // [kMTiles][chunks][step][32]
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int pieces = a.ldg / 8;  // 16-byte pieces of a row
#if __CUDA_ARCH__ >= 900
  constexpr bool kBulk = true;
  const int rs = pieces;  // the tile as it lies in global memory
  __shared__ unsigned long long bars[kWarps * kStages];
  unsigned long long* bar = bars + (threadIdx.x / 32) * kStages;
  unsigned phases = 0;  // bit s: the parity slot s's barrier completes next
  if (threadIdx.x % 32 == 0) {
    for (int i = 0; i < kStages; ++i) ptx::mbarrier_init(bar + i, 1);
    ptx::fence_mbarrier_init();
  }
  __syncwarp();
#else
  constexpr bool kBulk = false;
  const int rs = rows_slot_stride(a.ldg);
#endif
  uint4* ring = rows_smem + kMTiles * a.chunks * 2 * 32 + warp * kStages * 8 * rs;  // [stage][row][rs]
  const int g = lane / 4, t = lane % 4;
  const int qgroup = static_cast<int>(blockIdx.x) % a.qgroups;
  const long long part = blockIdx.x / a.qgroups, parts = gridDim.x / a.qgroups;
  const int q0 = qgroup * 16 * kMTiles;
  stage_query_fragments<kMTiles>(a, q0, qfrag);
  unsigned floor_key[kMTiles][2];
  query_floors<kMTiles, kSample>(a, q0, g, floor_key);
  __syncthreads();

  const long long tiles = 2 * a.groups;
  const long long tstep = parts * kWarps;
  auto tile_row = [&](long long j) { return (j / 2) * a.stride * 16 + (j % 2) * 8; };
  long long load_tile = part * kWarps + warp;
  int load_slot = 0;
  auto issue = [&]() {  // the next tile's copies (cp.async: one commit group, empty past the work)
    if (load_tile < tiles) {
      const long long row0 = tile_row(load_tile);
      uint4* slot = ring + load_slot * 8 * rs;
#if __CUDA_ARCH__ >= 900
      if (lane == 0) {  // rows past the model are not copied: their scores are never read
        const long long n = a.rows - row0 < 8 ? a.rows - row0 : 8;
        if (n > 0)
          ptx::bulk_copy_to_shared(slot, a.model + row0 * a.ldg, static_cast<unsigned>(n * pieces * 16),
                                   bar + load_slot);
        else
          ptx::mbarrier_arrive(bar + load_slot);
      }
#else
      int r = lane / pieces, p = lane % pieces;
      for (int i = lane; i < 8 * pieces; i += 32) {
        const bool in = row0 + r < a.rows;
        cp_row_chunk(slot + r * rs + p, in ? a.model + (row0 + r) * a.ldg + 8 * p : a.model, in);
        for (p += 32; p >= pieces; p -= pieces) ++r;
      }
#endif
      load_tile += tstep;
      load_slot = load_slot + 1 == kStages ? 0 : load_slot + 1;
    }
    if (!kBulk) ptx::cp_async_commit();
  };
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) issue();
  int slot = 0;
  for (long long j = part * kWarps + warp; j < tiles; j += tstep) {
    const long long row0 = tile_row(j);
    const long long r = row0 + mma_fragments::c_row(lane, 0);  // this lane's rows r and r + 1
    const float inv0 = r < a.rows ? __ldg(a.inv_norms + r) : 0.0f;
    const float inv1 = r + 1 < a.rows ? __ldg(a.inv_norms + r + 1) : 0.0f;
#if __CUDA_ARCH__ >= 900
    ptx::mbarrier_wait(bar + slot, (phases >> slot) & 1u);
    phases ^= 1u << slot;
#else
    ptx::cp_async_wait<kStages - 2>();
#endif
    __syncwarp();  // every lane's pieces of tile j have landed; every lane is done with slot j - 1
    const uint4* mine = ring + slot * 8 * rs + g * rs + t;
    slot = slot + 1 == kStages ? 0 : slot + 1;
    issue();
    // One partial sum per k-step parity: two independent MMA chains where one query tile would
    // make one (a dot product may add its terms in any order; the bound holds for any).
    float part_acc[2][kMTiles][4];
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int m = 0; m < kMTiles; ++m)
#pragma unroll
        for (int e = 0; e < 4; ++e) part_acc[h][m][e] = 0.0f;
#pragma unroll 2
    for (int c = 0; c < a.chunks; ++c) {
      const uint4 rw = 4 * c + t < pieces ? mine[4 * c] : make_uint4(0, 0, 0, 0);  // columns past the row: zero
#pragma unroll
      for (int step = 0; step < 2; ++step) {
        unsigned bf[2];
        mma_fragments::b_fragment(step, rw, bf);
#pragma unroll
        for (int m = 0; m < kMTiles; ++m) {
          const uint4 q = qfrag[((m * a.chunks + c) * 2 + step) * 32 + lane];
          const unsigned f[4] = {q.x, q.y, q.z, q.w};
          ptx::mma_m16n8k16(part_acc[step][m], f, bf[0], bf[1]);
        }
      }
    }
    float acc[kMTiles][4];
#pragma unroll
    for (int m = 0; m < kMTiles; ++m)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[m][e] = part_acc[0][m][e] + part_acc[1][m][e];
    if (row0 >= a.rows) continue;
#pragma unroll
    for (int m = 0; m < kMTiles; ++m)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = static_cast<int>(row0) + mma_fragments::c_row(lane, e);
        if (row >= a.rows) continue;
        offer<kSample>(a, acc[m][e], (e & 1) ? inv1 : inv0, floor_key[m][e >> 1],
                       q0 + m * 16 + mma_fragments::c_query(lane, e), row, j * 8 + mma_fragments::c_row(lane, e));
      }
  }
  if (!kBulk) ptx::cp_async_wait<0>();
#endif
}

}  // namespace distancies
