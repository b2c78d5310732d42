// The Hopper FP16 matmul (beyond the study): half inputs, fp32 accumulators, warpgroup MMA
// (wgmma.mma_async, both operands from shared memory) fed by TMA, the structure of cuBLAS's and
// CUTLASS's sm_90 kernels. A block of three warpgroups is warp-specialised:
//
// - warpgroup 0 is the producer: one thread issues the TMA copies of each 64-step K slice (A's
//   BM x 64 box, B's BN / 64 boxes of 64 x 64) into a STAGES-deep ring of shared memory, each
//   stage guarded by a "full" mbarrier (the copies' bytes landed) and an "empty" one (both
//   consumers' MMAs are done with it). It gives its registers away (setmaxnreg.dec).
// - warpgroups 1 and 2 are the consumers: each multiplies BM / 2 rows of the tile (one or two
//   m64nBNk16 wgmmas per 16 steps of K) into fp32 accumulators held in registers (setmaxnreg.inc:
//   up to 232 a thread, 128 of them accumulators at 128 x 256), keeps one slice's MMAs in flight
//   while it waits for the next slice, and writes its rows of C straight from the registers.
//
// The block is persistent: grid = min(tiles, SMs), tiles walked in the grouped order of
// tile_order.cuh, so the producer loads the next tile's first slices while the consumers write
// C. TMA zero-fills the parts of a box outside A (m x k) or B (k x n), which makes ragged m, n
// and k exact; C's stores are guarded. The layouts and descriptors are in wgmma_layout.hpp.
//
// The cluster rows (Cfg::kCluster = 2) launch clusters of two blocks along M that compute the
// two tiles of one tile unit (cluster_tile_at): both need the same B slices, so each producer
// copies half of B's boxes and multicasts them into both blocks, halving B's reads from L2.
// Each block's full barrier still expects the whole stage (its A, both halves of B: the peer's
// copies complete bytes on it too); its empty barrier counts the consumer warps of both blocks,
// which arrive on the two blocks' barriers (mapa), since either producer's multicast overwrites
// the stage in both. A cluster barrier after the barriers' initialisation and another before
// the exit keep every remote arrival and copy inside the peer's lifetime.
//
// The ping-pong rows (PingpongConfig) keep the producer and the ring, but each consumer
// warpgroup owns a whole tile, alternate tiles of the walk, and their mainloops take turns on
// named barriers (consume_pingpong): one warpgroup's stores of C run under the other's MMAs.
#pragma once
#include <cuda.h>  // CUtensorMap, a type only: nothing of libcuda is linked

#include <cstdint>

#include "kernels/matmul/hopper_ptx.cuh"
#include "kernels/matmul/tile_order.cuh"
#include "kernels/matmul/wgmma_layout.hpp"

namespace distancies {

namespace wgmma {

// The ring's shared-memory addresses: A slices, B slices, then the full and empty barriers.
template <class Cfg>
struct Ring {
  std::uint32_t a, b, bars;
  __device__ std::uint32_t a_slice(int s) const { return a + s * Cfg::kABytes; }
  __device__ std::uint32_t b_slice(int s) const { return b + s * Cfg::kBBytes; }
  __device__ std::uint32_t full(int s) const { return bars + 8 * s; }
  __device__ std::uint32_t empty(int s) const { return bars + 8 * (Cfg::kStages + s); }
};

// rank: the block's rank in its cluster (0 without one); units: tile units (cluster_tile_at) to
// walk, tiles_m x tiles_n without a cluster.
struct Problem {
  float* c;
  int m, n, tiles_m, tiles_n, ktiles, rank, units;
};

// A place in the ring: stage and the parity of its current turn.
struct RingPos {
  int stage = 0;
  std::uint32_t phase = 0;
  template <int kStages>
  __device__ void advance() {
    if (++stage == kStages) stage = 0, phase ^= 1u;
  }
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The tile of walk step t. Without a cluster every block walks its own tiles; in a cluster, the
// blocks walk the same units (first unit: the cluster's index), each its rank's tile of it.
template <class Cfg>
__device__ __forceinline__ ClusterTile tile_of(int t, const Problem& p) {
  if constexpr (Cfg::kCluster == 1) {
    const TileCoord tc = grouped_tile_at(t, p.tiles_m, p.tiles_n, Cfg::kGroup);
    return {tc.m, tc.n, true};
  } else {
    return cluster_tile_at(t, p.tiles_m, p.tiles_n, Cfg::kGroup, Cfg::kCluster, p.rank);
  }
}
template <class Cfg>
__device__ __forceinline__ int first_unit() {
  return static_cast<int>(blockIdx.x) / Cfg::kCluster;
}
template <class Cfg>
__device__ __forceinline__ int unit_stride() {
  return static_cast<int>(gridDim.x) / Cfg::kCluster;
}

// One slice's copies into stage `stage`: A's box, and B's boxes this block copies (all of them,
// or in a cluster its share, multicast to every block of the cluster).
template <class Cfg>
__device__ __forceinline__ void load_slice(const CUtensorMap* ta, const CUtensorMap* tb, const Ring<Cfg>& r, int stage,
                                           const ClusterTile& tc, int kt, const Problem& p) {
  const std::uint32_t full = r.full(stage);
  hopper::mbar_arrive_expect_tx(full, Cfg::kLandingBytes);  // whole boxes, zero-filled ones too
  if constexpr (Cfg::kCluster == 1) {
    hopper::tma_load_2d(r.a_slice(stage), ta, kt * kSliceK, tc.m * Cfg::kBM, full);
#pragma unroll
    for (int j = 0; j < Cfg::kBBoxes; ++j)
      hopper::tma_load_2d(r.b_slice(stage) + j * kBBoxBytes, tb, tc.n * Cfg::kBN + j * kBBoxCols, kt * kSliceK, full);
  } else {
    hopper::tma_load_2d(r.a_slice(stage), ta, kt * kSliceK, cluster_a_tile(tc, p.tiles_m) * Cfg::kBM, full);
    const int first = cluster_first_b_box(p.rank, Cfg::kBBoxes, Cfg::kCluster);
#pragma unroll
    for (int j = first; j < first + Cfg::kOwnBBoxes; ++j)
      hopper::tma_load_2d_multicast(r.b_slice(stage) + j * kBBoxBytes, tb, tc.n * Cfg::kBN + j * kBBoxCols,
                                    kt * kSliceK, full, cluster_cta_mask(Cfg::kCluster));
  }
}

// One thread: every slice of every tile this block walks, in the consumers' order. In a cluster
// a stage is free once the consumers of every block released it (their arrivals on this
// block's empty barrier), since this block's multicast writes it in all of them.
template <class Cfg>
__device__ __forceinline__ void produce(const CUtensorMap* ta, const CUtensorMap* tb, const Ring<Cfg>& r,
                                        const Problem& p) {
  RingPos at;
  for (int t = first_unit<Cfg>(); t < p.units; t += unit_stride<Cfg>()) {
    const ClusterTile tc = tile_of<Cfg>(t, p);
    for (int kt = 0; kt < p.ktiles; ++kt) {
      // its last slice's MMAs are done
      if constexpr (Cfg::kCluster == 1)
        hopper::mbar_wait(r.empty(at.stage), at.phase ^ 1u);
      else
        hopper::mbar_wait_named(r.empty(at.stage), at.phase ^ 1u, hopper::Hang::ProducerEmpty, at.stage);
      load_slice<Cfg>(ta, tb, r, at.stage, tc, kt, p);
      at.advance<Cfg::kStages>();
    }
  }
}

template <class Cfg>
__device__ __forceinline__ void mma(float* d, std::uint64_t a, std::uint64_t b) {
  if constexpr (Cfg::kBN == 256)
    hopper::wgmma_m64n256k16_f16(d, a, b);
  else
    hopper::wgmma_m64n128k16_f16(d, a, b);
}

// A consumer warpgroup's K loop for one tile: rows row0 .. row0 + kWgRows of the block's tile.
// A slice's MMAs are one wgmma group; once the next slice's group is issued, waiting for all but
// one group means the slice before is read, and its stage goes back to the producer (one arrival
// a warp: the empty barriers count 4 a consumer warpgroup).
// In a cluster, lane c of each warp arrives on the empty barrier of the cluster's block c (the
// same offset in every block), so each block's producer hears from every consumer warp.
template <class Cfg>
__device__ __forceinline__ void release(std::uint32_t empty) {
  const int lane = threadIdx.x % 32;
  if constexpr (Cfg::kCluster == 1) {
    if (lane == 0) hopper::mbar_arrive(empty);
  } else {
    if (lane < Cfg::kCluster) hopper::mbar_arrive_cluster(empty, lane);
  }
}
template <class Cfg>
__device__ __forceinline__ void wait_full(const Ring<Cfg>& r, const RingPos& at) {
  if constexpr (Cfg::kCluster == 1)
    hopper::mbar_wait(r.full(at.stage), at.phase);
  else
    hopper::mbar_wait_named(r.full(at.stage), at.phase, hopper::Hang::ConsumerFull, at.stage);
}

// One slice's MMAs, issued as one wgmma group once the slice has landed: rows row0 ... of the
// stage's A against its B.
template <class Cfg>
__device__ __forceinline__ void issue_slice(float* acc, const Ring<Cfg>& r, const RingPos& at, int row0) {
  wait_full<Cfg>(r, at);
  __syncwarp();
  hopper::wgmma_fence();
#pragma unroll
  for (int s = 0; s < kSliceK / kStepK; ++s)
#pragma unroll
    for (int i = 0; i < Cfg::kMmas; ++i)
      mma<Cfg>(acc + i * (Cfg::kBN / 2), a_desc(r.a_slice(at.stage), row0 + i * 64, s), b_desc(r.b_slice(at.stage), s));
  hopper::wgmma_commit();
}

template <class Cfg>
__device__ __forceinline__ void mainloop(float* acc, const Ring<Cfg>& r, int ktiles, int row0, RingPos& at) {
  int prev = 0;
  for (int kt = 0; kt < ktiles; ++kt) {
    issue_slice<Cfg>(acc, r, at, row0);
    hopper::wgmma_wait<1>();
    if (kt > 0) release<Cfg>(r.empty(prev));
    prev = at.stage;
    at.advance<Cfg::kStages>();
  }
  hopper::wgmma_wait<0>();
  if (ktiles > 0) release<Cfg>(r.empty(prev));
}

// The warpgroup's rows of C from its accumulators (accumulator_coord), pairs of columns as one
// 8-byte store where C's row allows it, every store guarded by m and n.
template <class Cfg>
__device__ __forceinline__ void store(const float* acc, const Problem& p, int row0, int col0) {
  const int t = threadIdx.x % 128;
  const bool pairs = p.n % 2 == 0 && reinterpret_cast<std::uintptr_t>(p.c) % 8 == 0;
#pragma unroll
  for (int i = 0; i < Cfg::kMmas; ++i)
#pragma unroll
    for (int q = 0; q < Cfg::kBN / 2; q += 2) {
      const FragCoord f = accumulator_coord(t, q);
      const int r = row0 + i * 64 + f.row, c = col0 + f.col;
      if (r >= p.m) continue;
      float* at = p.c + static_cast<long long>(r) * p.n + c;
      const float v0 = acc[i * (Cfg::kBN / 2) + q], v1 = acc[i * (Cfg::kBN / 2) + q + 1];
      if (pairs && c + 1 < p.n) {
        *reinterpret_cast<float2*>(at) = make_float2(v0, v1);
      } else {
        if (c < p.n) at[0] = v0;
        if (c + 1 < p.n) at[1] = v1;
      }
    }
}

// Consumer warpgroup cw (0 or 1): the same tiles as the producer, in the same order.
template <class Cfg>
__device__ __forceinline__ void consume(const Ring<Cfg>& r, const Problem& p, int cw) {
  RingPos at;
  for (int t = first_unit<Cfg>(); t < p.units; t += unit_stride<Cfg>()) {
    const ClusterTile tc = tile_of<Cfg>(t, p);
    float acc[Cfg::kAccum];
#pragma unroll
    for (int i = 0; i < Cfg::kAccum; ++i) acc[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < Cfg::kAccum; ++i) hopper::fence_operand(acc[i]);
    mainloop<Cfg>(acc, r, p.ktiles, cw * Cfg::kWgRows, at);
#pragma unroll
    for (int i = 0; i < Cfg::kAccum; ++i) hopper::fence_operand(acc[i]);
    if (tc.real) store<Cfg>(acc, p, tc.m * Cfg::kBM + cw * Cfg::kWgRows, tc.n * Cfg::kBN);
  }
}

// Ping-pong (PingpongConfig): warpgroup cw's K loop for tile j, its own WM x BN tile. It takes
// its turn before its first slice and hands it on once its last slice's MMAs are issued, so the
// other warpgroup's MMAs queue right behind them while this one drains and stores C. Its ring
// place starts at the block's slice j ktiles: the other warpgroup's tiles lie between.
template <class Cfg>
__device__ __forceinline__ void pingpong_mainloop(float* acc, const Ring<Cfg>& r, int ktiles, int j, int tiles,
                                                  int cw) {
  if (pingpong_waits_turn(j)) hopper::named_barrier_sync(pingpong_turn_barrier(cw), kPingpongTurnThreads);
  const RingTurn turn = pingpong_ring_turn(static_cast<long long>(j) * ktiles, Cfg::kStages);
  RingPos at;
  at.stage = turn.stage;
  at.phase = turn.phase;
  int prev = 0;
  for (int kt = 0; kt < ktiles; ++kt) {
    issue_slice<Cfg>(acc, r, at, 0);
    hopper::wgmma_wait<1>();
    if (kt > 0) release<Cfg>(r.empty(prev));
    prev = at.stage;
    at.advance<Cfg::kStages>();
  }
  if (pingpong_hands_on(j, tiles)) hopper::named_barrier_arrive(pingpong_turn_barrier(1 - cw), kPingpongTurnThreads);
  hopper::wgmma_wait<0>();
  release<Cfg>(r.empty(prev));  // ktiles >= 1: k = 0 never launches
}

// Ping-pong consumer warpgroup cw: tiles cw, cw + 2, ... of the block's walk (the producer's
// order, produce), each stored whole by this warpgroup while the other multiplies.
template <class Cfg>
__device__ __forceinline__ void consume_pingpong(const Ring<Cfg>& r, const Problem& p, int cw) {
  const int first = first_unit<Cfg>(), stride = unit_stride<Cfg>();
  const int tiles = pingpong_block_tiles(first, stride, p.units);
  for (int j = cw; j < tiles; j += 2) {
    const ClusterTile tc = tile_of<Cfg>(first + j * stride, p);
    float acc[Cfg::kAccum];
#pragma unroll
    for (int i = 0; i < Cfg::kAccum; ++i) acc[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < Cfg::kAccum; ++i) hopper::fence_operand(acc[i]);
    pingpong_mainloop<Cfg>(acc, r, p.ktiles, j, tiles, cw);
#pragma unroll
    for (int i = 0; i < Cfg::kAccum; ++i) hopper::fence_operand(acc[i]);
    store<Cfg>(acc, p, tc.m * Cfg::kBM, tc.n * Cfg::kBN);
  }
}

#endif  // sm_90a

}  // namespace wgmma

// tma_a: A's half copy (m rows x k, rows lda16 apart), boxes of BM x 64; tma_b: B's (k x n,
// rows ldb16 apart), boxes of 64 x 64; both 128-byte swizzled (variants/matmul/wgmma_f16_matmul.cu
// makes them). Only sm_90a has the instructions: elsewhere the body is empty (the launch refuses
// other devices, and the library holding it is built for sm_90a alone).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    wgmma_f16_matmul_kernel(const __grid_constant__ CUtensorMap tma_a, const __grid_constant__ CUtensorMap tma_b,
                            float* c, int m, int n, int k) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace wgmma;
  extern __shared__ __align__(1024) unsigned char wgmma_smem[];
  // Every tile must start on its swizzle pattern (1,024 bytes): the base rounded up.
  const std::uint32_t base = (hopper::smem_u32(wgmma_smem) + kAtomBytes - 1) & ~std::uint32_t(kAtomBytes - 1);
  const Ring<Cfg> ring{base, base + Cfg::kStages * Cfg::kABytes, base + Cfg::kStages * Cfg::kStageBytes};
  const int tiles_m = (m + Cfg::kBM - 1) / Cfg::kBM, tiles_n = (n + Cfg::kBN - 1) / Cfg::kBN;
  const int rank = Cfg::kCluster == 1 ? 0 : static_cast<int>(hopper::cluster_ctarank());
  const Problem p{
      c, m, n, tiles_m, tiles_n, (k + kSliceK - 1) / kSliceK, rank, cluster_units_m(tiles_m, Cfg::kCluster) * tiles_n};
  if (threadIdx.x == 0) {
    // A cluster row launched without its cluster would wait for a peer forever: fail at once.
    if (Cfg::kCluster > 1 && hopper::cluster_nctarank() != Cfg::kCluster) __trap();
    hopper::prefetch_tensormap(&tma_a);
    hopper::prefetch_tensormap(&tma_b);
    for (int s = 0; s < Cfg::kStages; ++s) {
      hopper::mbar_init(ring.full(s), 1);                     // the producer's arrival (+ bytes)
      hopper::mbar_init(ring.empty(s), Cfg::kEmptyArrivals);  // a consumer warp of each block
    }
    hopper::fence_barrier_init();
  }
  // In a cluster, the peer's barriers must be initialised before any copy or arrival reaches
  // them: a cluster-wide barrier, which also orders this block's threads.
  if constexpr (Cfg::kCluster == 1)
    __syncthreads();
  else
    hopper::cluster_sync();
  const int wg = threadIdx.x / 128;
  if (wg == 0) {
    hopper::setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) produce<Cfg>(&tma_a, &tma_b, ring, p);
  } else {
    hopper::setmaxnreg_inc<Cfg::kConsumerRegs>();
    if constexpr (Cfg::kPingpong)
      consume_pingpong<Cfg>(ring, p, wg - 1);
    else
      consume<Cfg>(ring, p, wg - 1);
  }
  // No block leaves while its peer may still arrive on its empty barriers (the consumers'
  // last releases); the multicast bytes into it are all awaited by its own consumers.
  if constexpr (Cfg::kCluster > 1) {
    __syncwarp();
    hopper::cluster_sync();
  }
#endif
}

}  // namespace distancies
