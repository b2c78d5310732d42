// The Hopper FP16 matmul's shapes and shared-memory layouts (wgmma_f16_matmul.cuh), shared with
// the host: the launch sizes its TMA boxes and shared memory from WgmmaConfig, and
// tests/test_wgmma_layout.cpp checks on the CPU that the matrix descriptors the kernel builds
// name the bytes where TMA puts each element.
//
// A block computes BM x BN of C in 64-step K slices. A slice of A (BM rows x 64 halves, K
// contiguous) is one TMA box: rows of 128 bytes, 128-byte swizzled, K-major for wgmma. A slice of
// B (64 rows of K x BN halves, N contiguous: row-major B is "N-major" for wgmma, the instruction's
// imm-trans-b = 1) is BN / 64 boxes of 64 x 64, each again rows of 128 bytes, swizzled.
#pragma once
#include <cstdint>

#include "kernels/common/host_device.hpp"

namespace distancies::wgmma {

// The descriptor's bits 62-63 (PTX ISA, "Matrix Descriptor Format").
enum class Swizzle : unsigned { None = 0, B128 = 1, B64 = 2, B32 = 3 };

// A shared-memory matrix descriptor: bits 0-13 the start address, 16-29 the leading dimension
// byte offset, 32-45 the stride dimension byte offset, each without its 4 low bits (16-byte
// units); 49-51 the base offset (0: every tile starts on its swizzle pattern's 1,024 bytes);
// 62-63 the swizzle.
constexpr DISTANCIES_HD std::uint64_t smem_desc(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo, Swizzle s) {
  return std::uint64_t((addr & 0x3FFFFu) >> 4) | (std::uint64_t((lbo >> 4) & 0x3FFFu) << 16) |
         (std::uint64_t((sbo >> 4) & 0x3FFFu) << 32) | (std::uint64_t(static_cast<unsigned>(s)) << 62);
}

constexpr int kRowBytes = 128;    // a swizzled row: 64 halves
constexpr int kAtomBytes = 1024;  // 8 rows: the period of the 128-byte swizzle
constexpr int kSliceK = 64;       // halves of K a stage holds (one swizzled row)
constexpr int kStepK = 16;        // K of one wgmma (m64nNk16)

// K-major A: 8-row groups kAtomBytes apart (stride offset); the leading offset is unused when
// a k16 step (32 bytes) lies inside one swizzled row, and set to 16 bytes as CUTLASS does. Step s
// of the slice starts 32 s bytes into the rows; the hardware swizzles the absolute address, as
// TMA did, so the rows' chunks are found wherever the step starts.
constexpr DISTANCIES_HD std::uint64_t a_desc(std::uint32_t slice, int row0, int step) {
  return smem_desc(slice + row0 * kRowBytes + step * kStepK * 2, 16, kAtomBytes, Swizzle::B128);
}

// N-major B: a box holds 64 columns (one swizzled row) of the slice's 64 rows of K; the leading
// offset is the step from one box (64 columns) to the next, the stride offset from 8 rows of K to
// the next. Step s starts at row 16 s (a multiple of 8 rows: the swizzle's phase is kept).
constexpr int kBBoxCols = 64;
constexpr int kBBoxBytes = kSliceK * kRowBytes;
constexpr DISTANCIES_HD std::uint64_t b_desc(std::uint32_t slice, int step) {
  return smem_desc(slice + step * kStepK * kRowBytes, kBBoxBytes, kAtomBytes, Swizzle::B128);
}

// The 128-byte swizzle: the 16-byte chunk (address bits 4-6) XOR the row in the 1,024-byte
// pattern (bits 7-9), on the absolute shared-memory address (TMA writes so, wgmma reads so).
constexpr DISTANCIES_HD std::uint32_t swizzle128(std::uint32_t addr) { return addr ^ (((addr >> 7) & 7u) << 4); }

// Where TMA's 128-byte swizzle puts half (r, c) of a box of 128-byte rows at `box`.
constexpr DISTANCIES_HD std::uint32_t tma_byte(std::uint32_t box, int r, int c) {
  return swizzle128(box + r * kRowBytes + c * 2);
}

// Where wgmma reads half (mn, k) (k < 16) of an operand given by `desc`: the PTX ISA's canonical
// 128-byte-swizzled layouts for 16-bit types, K-major ((8, m), 2 chunks) : ((128 B, SBO), 16 B)
// and MN-major ((64, n), (8, 2)) : ((2 B, LBO), (128 B, SBO)). A model for the tests.
constexpr std::uint32_t wgmma_byte(std::uint64_t desc, bool mn_major, int mn, int k) {
  const std::uint32_t start = std::uint32_t(desc & 0x3FFFu) << 4;
  const std::uint32_t lbo = std::uint32_t((desc >> 16) & 0x3FFFu) << 4;
  const std::uint32_t sbo = std::uint32_t((desc >> 32) & 0x3FFFu) << 4;
  const std::uint32_t linear = mn_major ? start + (mn / 64) * lbo + (k / 8) * sbo + (k % 8) * kRowBytes + (mn % 64) * 2
                                        : start + (mn / 8) * sbo + (mn % 8) * kRowBytes + k * 2;
  return swizzle128(linear);
}

// Accumulator i of thread t (0..127) of a warpgroup in an m64nN wgmma's fp32 D: warp t / 32 owns
// rows 16 (t / 32) .. + 15; per 8 columns, 4 registers: (row, 2 (t % 4)), + 1 column, + 8 rows.
struct FragCoord {
  int row, col;
};
constexpr DISTANCIES_HD FragCoord accumulator_coord(int t, int i) {
  return {(t / 32) * 16 + (t % 32) / 4 + ((i / 2) % 2) * 8, (i / 4) * 8 + (t % 4) * 2 + i % 2};
}

// Clusters of `cluster` blocks along M (the cluster rows): the blocks of a cluster compute the
// tiles m = cluster u + rank, u a "tile unit", of one column of tiles n, so they need the same
// B slices. Each block copies its share of B's 64-column boxes and multicasts it to every block
// of the cluster; each copies its own A. The units are walked in the grouped order of
// tile_order.cuh (group / cluster units a group, the same tile rows), every block of a cluster
// the same units. Where the tile rows do not fill the last unit, the blocks past the edge
// ("phantom" tiles) still load and multiply (their peers need their share of B, and every
// block must take as many turns of the ring), but on tile rows - 1's A and store nothing.
struct ClusterTile {
  int m, n;   // tile indices
  bool real;  // m < tiles_m: the block stores its tile
};
constexpr DISTANCIES_HD int cluster_units_m(int tiles_m, int cluster) { return (tiles_m + cluster - 1) / cluster; }
constexpr DISTANCIES_HD ClusterTile cluster_tile_at(int unit, int tiles_m, int tiles_n, int group, int cluster,
                                                    int rank) {
  const int units_m = cluster_units_m(tiles_m, cluster), unit_group = group / cluster;
  const int per_group = unit_group * tiles_n;
  const int first = (unit / per_group) * unit_group;
  const int rows = units_m - first < unit_group ? units_m - first : unit_group;
  const int in_group = unit % per_group;
  const int m = (first + in_group % rows) * cluster + rank;
  return {m, in_group / rows, m < tiles_m};
}
// The tile row whose A a block copies: its own, or for a phantom tile the last real one (TMA
// then reads rows inside A, never a box wholly outside it).
constexpr DISTANCIES_HD int cluster_a_tile(const ClusterTile& t, int tiles_m) { return t.real ? t.m : tiles_m - 1; }
// B's 64-column boxes the block of rank `rank` copies for the cluster: boxes / cluster of them
// from this one on; the cta mask of the multicast: every block of the cluster.
constexpr DISTANCIES_HD int cluster_first_b_box(int rank, int boxes, int cluster) { return rank * (boxes / cluster); }
constexpr DISTANCIES_HD std::uint16_t cluster_cta_mask(int cluster) {
  return static_cast<std::uint16_t>((1u << cluster) - 1u);
}

// A block tile: two consumer warpgroups of BM / 2 rows each (one or two m64 wgmmas a step, N =
// BN) and one producer warpgroup issuing the TMA copies into a STAGES-deep ring; CLUSTER blocks
// a cluster along M sharing B's copies (1: no cluster, each block copies its whole B).
template <int BM, int BN, int STAGES, int CLUSTER = 1>
struct WgmmaConfig {
  static constexpr bool kPingpong = false;  // both consumers on one tile
  static constexpr int kBM = BM, kBN = BN, kBK = kSliceK, kStages = STAGES, kCluster = CLUSTER;
  static constexpr int kConsumers = 2;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kWgRows = BM / kConsumers;  // rows of C a consumer warpgroup owns
  static constexpr int kMmas = kWgRows / 64;       // m64 wgmmas a step
  static constexpr int kAccum = kMmas * BN / 2;    // fp32 accumulators a consumer thread
  static constexpr int kABytes = BM * kBK * 2, kBBytes = kBK * BN * 2, kStageBytes = kABytes + kBBytes;
  static constexpr int kBBoxes = BN / kBBoxCols;
  static constexpr int kOwnBBoxes = kBBoxes / kCluster;  // the boxes of B a block copies
  // A stage's bytes landing in each block (its full barrier's transaction count): its A and all
  // of B, its own boxes and those its peers multicast.
  static constexpr int kLandingBytes = kABytes + kBBytes;
  // Arrivals that free a stage (its empty barrier): one a consumer warp of every block of the
  // cluster, since the producer's multicast overwrites the stage in all of them.
  static constexpr int kEmptyArrivals = kCluster * kConsumers * 4;
  // The ring, its full and empty barriers, and slack to round the base up to 1,024 bytes.
  static constexpr int kSharedBytes = STAGES * kStageBytes + 2 * STAGES * 8 + kAtomBytes;
  static constexpr int kGroup = 8;  // tile rows a group (tile_order.cuh)
  // Registers a thread after setmaxnreg: 2 x 128 x 232 + 128 x 40 = 64,512 of the SM's 65,536.
  static constexpr int kConsumerRegs = 232, kProducerRegs = 40;
  static_assert(BN == 128 || BN == 256, "wgmma N of 128 or 256, whole 64-column boxes");
  static_assert(kWgRows % 64 == 0 && BM <= 256, "whole m64 wgmmas; a TMA box is at most 256 rows");
  static_assert(kABytes % kAtomBytes == 0 && kBBytes % kAtomBytes == 0, "every tile on its swizzle pattern");
  static_assert(kSharedBytes <= 227 * 1024, "the block's shared memory on sm_90");
  static_assert((kCluster == 1 || kCluster == 2) && kBBoxes % kCluster == 0 && kGroup % kCluster == 0,
                "a cluster of 1 or 2 blocks, B's boxes and the group's tile rows split evenly among them");
};

// Ping-pong consumers (wgmma_pingpong_matmul.cuh): each consumer warpgroup owns a whole WM x BN
// tile, the two taking alternate tiles of the block's walk (tile j, the j-th the block walks,
// to warpgroup j % 2), and their mainloops take turns, so one's epilogue runs under the other's
// MMAs. The producer loads every tile's slices in walk order into one ring: tile j's slice kt is
// the block's slice j ktiles + kt, whose stage and phase both sides compute from that number.
constexpr DISTANCIES_HD int pingpong_warpgroup(int j) { return j % 2; }
// Tiles a block walks: first, first + stride, ... below units.
constexpr DISTANCIES_HD int pingpong_block_tiles(int first, int stride, int units) {
  return first < units ? (units - first + stride - 1) / stride : 0;
}
// The ring place of the block's slice `index` (stage, and the parity its full barrier's phase
// has on that turn of the ring).
struct RingTurn {
  int stage;
  unsigned phase;
};
constexpr DISTANCIES_HD RingTurn pingpong_ring_turn(long long index, int stages) {
  return {static_cast<int>(index % stages), static_cast<unsigned>((index / stages) % 2)};
}
// The turn: tile j > 0 waits until tile j - 1's MMAs are all issued; tile j hands the turn on
// only if the block has a tile j + 1. Hand-overs and waits then pair up exactly (tiles - 1 of
// each), so no named barrier is left half-arrived when the block exits.
constexpr DISTANCIES_HD bool pingpong_waits_turn(int j) { return j > 0; }
constexpr DISTANCIES_HD bool pingpong_hands_on(int j, int tiles) { return j + 1 < tiles; }
// The named barrier warpgroup cw waits on for its turn (0 is __syncthreads'); 256 threads: the
// waiting warpgroup's bar.sync and the other's bar.arrive.
constexpr DISTANCIES_HD int pingpong_turn_barrier(int cw) { return 1 + cw; }
constexpr int kPingpongTurnThreads = 256;

// Ping-pong: a WM x BN tile a consumer warpgroup (WM / 64 m64 wgmmas a step), two consumers
// and a producer warpgroup, one tile's slice a stage; the names the shared functions of
// wgmma_f16_matmul.cuh read (kBM: the rows of A's box, one warpgroup's tile).
template <int WM, int BN, int STAGES>
struct PingpongConfig {
  static constexpr bool kPingpong = true;
  static constexpr int kBM = WM, kBN = BN, kBK = kSliceK, kStages = STAGES, kCluster = 1;
  static constexpr int kConsumers = 2;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kWgRows = WM;
  static constexpr int kMmas = WM / 64;
  static constexpr int kAccum = kMmas * BN / 2;
  static constexpr int kABytes = WM * kBK * 2, kBBytes = kBK * BN * 2, kStageBytes = kABytes + kBBytes;
  static constexpr int kBBoxes = BN / kBBoxCols, kOwnBBoxes = kBBoxes;
  static constexpr int kLandingBytes = kABytes + kBBytes;
  // One warpgroup reads a stage: its 4 warps free it.
  static constexpr int kEmptyArrivals = 4;
  static constexpr int kSharedBytes = STAGES * kStageBytes + 2 * STAGES * 8 + kAtomBytes;
  static constexpr int kGroup = 8;
  static constexpr int kConsumerRegs = 232, kProducerRegs = 40;
  static_assert(BN == 128 || BN == 256, "wgmma N of 128 or 256, whole 64-column boxes");
  static_assert(WM % 64 == 0 && kAccum <= 128, "whole m64 wgmmas; at most 128 accumulators under 232 registers");
  static_assert(kABytes % kAtomBytes == 0 && kBBytes % kAtomBytes == 0, "every tile on its swizzle pattern");
  static_assert(kSharedBytes <= 227 * 1024, "the block's shared memory on sm_90");
};

}  // namespace distancies::wgmma
