// The Hopper FP16 matmul's shared-memory layouts (kernels/matmul/wgmma_layout.hpp), on the CPU:
// the descriptor's bit fields against values worked out by hand from the PTX ISA's "Matrix
// Descriptor Format", and, for every row's tile shape, that the element each wgmma k16 step
// reads through the kernel's descriptors (the ISA's canonical 128-byte-swizzled layouts) is the
// element TMA's 128-byte swizzle put there. The wgmma_byte model is ours: a mistake shared by
// it and the hardware's reading is not caught here, but swapped offsets, a wrong step advance
// or box stride are (a test shows the check sees one). The cluster rows' tile walk over ragged
// grids and their split of B's copies are checked here too, and the ping-pong rows' protocol
// (which warpgroup takes which tile, the ring places, the turns) in a simulated block.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/matmul/wgmma_layout.hpp"

using namespace distancies::wgmma;

TEST(WgmmaLayout, DescriptorBitFieldsAsThePtxIsaPlacesThem) {
  // start 0x400 >> 4 = 0x40 in bits 0-13; leading 16 B -> 1 in bits 16-29; stride 1,024 B -> 64 in
  // bits 32-45; 128-byte swizzle = 1 in bits 62-63.
  EXPECT_EQ(smem_desc(0x400, 16, 1024, Swizzle::B128), 0x4000004000010040ull);
  EXPECT_EQ(smem_desc(0x400, 16, 1024, Swizzle::None), 0x0000004000010040ull);
  EXPECT_EQ(smem_desc(0x400, 16, 1024, Swizzle::B32), 0xC000004000010040ull);
  // Each field is 14 bits; the bits between them stay 0 (base offset 0).
  EXPECT_EQ(smem_desc(0x3FFF0, 0x3FFF0, 0x3FFF0, Swizzle::B128), 0x40003FFF3FFF3FFFull);
  // A, K-major: rows 64.. of a slice at 0x400, step 3 (96 bytes in): 0x400 + 8,192 + 96 = 0x2460.
  EXPECT_EQ(a_desc(0x400, 64, 3), 0x4000004000010246ull);
  // B, N-major: step 1 of a slice at 0x8400 starts 16 rows (2,048 bytes) in: 0x8C00; leading
  // offset one 64 x 64 box (8,192 bytes -> 512), stride 8 rows (1,024 bytes -> 64).
  EXPECT_EQ(b_desc(0x8400, 1), 0x40000040020008C0ull);
}

TEST(WgmmaLayout, TheSwizzleIsTheChunkXorTheRowInAPattern) {
  EXPECT_EQ(swizzle128(0), 0u);
  EXPECT_EQ(swizzle128(128), 128u + 16u);                               // row 1, chunk 0 -> chunk 1
  EXPECT_EQ(swizzle128(7 * 128 + 16), 7 * 128 + 96u);                   // row 7, chunk 1 -> chunk 6
  EXPECT_EQ(swizzle128(1024 + 5), 1024 + 5u);                           // the pattern repeats every 1,024 bytes
  EXPECT_EQ(tma_byte(2048, 3, 9), 2048 + 3 * 128 + 16 * (1 ^ 3) + 2u);  // half 9: chunk 1, byte 2
}

namespace {

// Every element every consumer warpgroup reads in every step of a slice, for tile shape Cfg,
// against where TMA put it; returns the first mismatch ("" if none). B's descriptor may be
// replaced (the last test's wrong one).
template <class Cfg, class BDesc>
std::string first_mismatch(BDesc b_of_step) {
  const std::uint32_t a0 = 0, b0 = Cfg::kStages * Cfg::kABytes;  // stage 0's slices in the ring
  for (int s = 0; s < kSliceK / kStepK; ++s) {
    for (int cw = 0; cw < Cfg::kConsumers; ++cw)
      for (int i = 0; i < Cfg::kMmas; ++i) {
        // A ping-pong stage holds one warpgroup's rows, read by either warpgroup from row 0.
        const int row0 = (Cfg::kPingpong ? 0 : cw * Cfg::kWgRows) + i * 64;
        const std::uint64_t d = a_desc(a0, row0, s);
        for (int mn = 0; mn < 64; ++mn)
          for (int k = 0; k < kStepK; ++k)
            if (wgmma_byte(d, false, mn, k) != tma_byte(a0, row0 + mn, s * kStepK + k))
              return "A row " + std::to_string(row0 + mn) + ", k " + std::to_string(s * kStepK + k);
      }
    const std::uint64_t d = b_of_step(b0, s);
    for (int mn = 0; mn < Cfg::kBN; ++mn)
      for (int k = 0; k < kStepK; ++k) {
        const std::uint32_t box = b0 + (mn / kBBoxCols) * kBBoxBytes;
        if (wgmma_byte(d, true, mn, k) != tma_byte(box, s * kStepK + k, mn % kBBoxCols))
          return "B k " + std::to_string(s * kStepK + k) + ", column " + std::to_string(mn);
      }
  }
  return "";
}

template <class Cfg>
void expect_descriptors_read_what_tma_wrote(const char* name) {
  EXPECT_EQ(first_mismatch<Cfg>([](std::uint32_t slice, int s) { return b_desc(slice, s); }), "") << name;
  EXPECT_EQ(Cfg::kABytes % kAtomBytes, 0) << name << ": B's slices start on a swizzle pattern";
  EXPECT_LE(Cfg::kSharedBytes, 227 * 1024) << name;
  EXPECT_LE(128 * (Cfg::kConsumers * Cfg::kConsumerRegs + Cfg::kProducerRegs), 65536) << name << ": registers";
  EXPECT_LE(Cfg::kAccum + 32, Cfg::kConsumerRegs) << name << ": accumulators and room for addresses";
}

}  // namespace

TEST(WgmmaLayout, EveryRowsDescriptorsReadWhatTmaWrote) {
  expect_descriptors_read_what_tma_wrote<WgmmaConfig<128, 256, 4>>("wgmma_f16_128x256");
  expect_descriptors_read_what_tma_wrote<WgmmaConfig<256, 128, 4>>("wgmma_f16_256x128");
  expect_descriptors_read_what_tma_wrote<WgmmaConfig<128, 128, 6>>("wgmma_f16_128x128");
  expect_descriptors_read_what_tma_wrote<WgmmaConfig<128, 256, 4, 2>>("wgmma_f16_128x256_c2");
  expect_descriptors_read_what_tma_wrote<WgmmaConfig<128, 128, 6, 2>>("wgmma_f16_128x128_c2");
  expect_descriptors_read_what_tma_wrote<PingpongConfig<64, 256, 5>>("wgmma_f16_pingpong_64x256");
  expect_descriptors_read_what_tma_wrote<PingpongConfig<128, 128, 7>>("wgmma_f16_pingpong_128x128");
}

TEST(WgmmaLayout, TheCheckSeesSwappedOffsetsAndAWrongStep) {
  using Cfg = WgmmaConfig<128, 256, 4>;
  const std::string swapped = first_mismatch<Cfg>([](std::uint32_t slice, int s) {
    return smem_desc(slice + s * kStepK * kRowBytes, kAtomBytes, kBBoxBytes, Swizzle::B128);
  });
  EXPECT_NE(swapped, "") << "B's leading and stride offsets swapped must read other elements";
  const std::string k_major_step = first_mismatch<Cfg>([](std::uint32_t slice, int s) {
    return smem_desc(slice + s * kStepK * 2, kBBoxBytes, kAtomBytes, Swizzle::B128);
  });
  EXPECT_NE(k_major_step, "") << "B's step advanced as if K were contiguous must read other elements";
}

TEST(WgmmaLayout, AccumulatorsCoverTheWarpgroupsTileOnce) {
  // The PTX ISA's figure for m64nNk16's D: thread 0 holds (0, 0), (0, 1), (8, 0), (8, 1), then
  // (0, 8) ...; lane 5 of warp 1 starts at row 16 + 1, column 2.
  EXPECT_EQ(accumulator_coord(0, 0).row, 0);
  EXPECT_EQ(accumulator_coord(0, 1).col, 1);
  EXPECT_EQ(accumulator_coord(0, 2).row, 8);
  EXPECT_EQ(accumulator_coord(0, 4).col, 8);
  EXPECT_EQ(accumulator_coord(37, 0).row, 17);
  EXPECT_EQ(accumulator_coord(37, 0).col, 2);
  for (int n : {128, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) {
        const FragCoord f = accumulator_coord(t, i);
        ASSERT_TRUE(f.row >= 0 && f.row < 64 && f.col >= 0 && f.col < n) << t << " " << i;
        seen.insert({f.row, f.col});
      }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(64 * n)) << "N = " << n << ": every element once";
  }
}

// The cluster rows (kernels/matmul/wgmma_layout.hpp, cluster_tile_at and the B split): which
// tile each block of a cluster computes, which of B's boxes it copies for both, and what its
// barriers count.
namespace {

using Walk = std::function<ClusterTile(int unit, int tiles_m, int tiles_n, int rank)>;

// The grouped order of kernels/matmul/tile_order.cuh (grouped_tile_at, device code), on the CPU.
std::pair<int, int> grouped_reference(int pid, int tiles_m, int tiles_n, int group) {
  const int per_group = group * tiles_n, first_m = (pid / per_group) * group;
  const int rows = std::min(tiles_m - first_m, group), in_group = pid % per_group;
  return {first_m + in_group % rows, in_group / rows};
}

// What a cluster-of-2 walk must do over tiles_m x tiles_n tiles; "" if it does: every real tile
// once, both blocks of a unit on one column of tiles (the B they share) and adjacent rows, a
// phantom tile only past an odd last tile row, every A copy inside A.
std::string walk_problem(const Walk& walk, int tiles_m, int tiles_n) {
  const int units = cluster_units_m(tiles_m, 2) * tiles_n;
  std::vector<int> seen(static_cast<std::size_t>(tiles_m) * tiles_n, 0);
  const std::string at = " (" + std::to_string(tiles_m) + " x " + std::to_string(tiles_n) + " tiles)";
  for (int u = 0; u < units; ++u) {
    const ClusterTile t0 = walk(u, tiles_m, tiles_n, 0), t1 = walk(u, tiles_m, tiles_n, 1);
    if (t0.n != t1.n || t1.m != t0.m + 1 || t0.m % 2) return "unit " + std::to_string(u) + " not a tile pair" + at;
    if (!t0.real || t1.real != (t1.m < tiles_m) || (!t1.real && t1.m != tiles_m))
      return "unit " + std::to_string(u) + " a wrong phantom" + at;
    for (const ClusterTile& t : {t0, t1}) {
      if (t.n < 0 || t.n >= tiles_n || cluster_a_tile(t, tiles_m) < 0 || cluster_a_tile(t, tiles_m) >= tiles_m)
        return "unit " + std::to_string(u) + " outside the tiles" + at;
      if (t.real) ++seen[static_cast<std::size_t>(t.m) * tiles_n + t.n];
    }
  }
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (seen[i] != 1) return "tile " + std::to_string(i) + " computed " + std::to_string(seen[i]) + " times" + at;
  return "";
}

const Walk kClusterWalk = [](int u, int tm, int tn, int rank) { return cluster_tile_at(u, tm, tn, 8, 2, rank); };

}  // namespace

TEST(WgmmaCluster, WithoutAClusterTheWalkIsTheGroupedOrder) {
  for (int tm : {1, 3, 8, 9, 17, 33})
    for (int tn : {1, 2, 5})
      for (int pid = 0; pid < tm * tn; ++pid) {
        const ClusterTile t = cluster_tile_at(pid, tm, tn, 8, 1, 0);
        EXPECT_EQ(std::make_pair(t.m, t.n), grouped_reference(pid, tm, tn, 8)) << tm << " x " << tn << ", " << pid;
        EXPECT_TRUE(t.real);
      }
}

TEST(WgmmaCluster, PairsCoverRaggedGridsOnce) {
  for (int tm = 1; tm <= 20; ++tm)
    for (int tn = 1; tn <= 6; ++tn) EXPECT_EQ(walk_problem(kClusterWalk, tm, tn), "");
  // The GPU tests' and the bench's shapes, in 128-row tiles and 128- or 256-column ones.
  const std::pair<int, int> shapes[] = {{1, 1},         {3, 5},       {129, 131},  {1153, 136}, {64, 8},
                                        {2100, 2100},   {300, 260},   {100, 1},    {1, 100},    {512, 64},
                                        {1024, 131072}, {4096, 4096}, {8192, 8192}};
  for (const auto& [m, n] : shapes)
    for (int bn : {128, 256}) EXPECT_EQ(walk_problem(kClusterWalk, (m + 127) / 128, (n + bn - 1) / bn), "") << m;
}

TEST(WgmmaCluster, UnitsKeepTheGroupsTileRows) {
  // 20 tile rows, 3 columns: the first group's 4 units x 3 columns are tile rows 0-7, down the
  // columns; the last group has 2 units (rows 16-19).
  for (int u = 0; u < 12; ++u) {
    const ClusterTile t = cluster_tile_at(u, 20, 3, 8, 2, 0);
    EXPECT_EQ(t.m, 2 * (u % 4)) << u;
    EXPECT_EQ(t.n, u / 4) << u;
  }
  EXPECT_EQ(cluster_tile_at(24, 20, 3, 8, 2, 1).m, 17);
  EXPECT_EQ(cluster_tile_at(25, 20, 3, 8, 2, 0).m, 18);
  EXPECT_EQ(cluster_tile_at(26, 20, 3, 8, 2, 0).n, 1);
  // An odd last tile row: unit (2, n) of 5 tile rows is rows 4 and 5, 5 a phantom on row 4's A.
  const ClusterTile phantom = cluster_tile_at(2, 5, 1, 8, 2, 1);
  EXPECT_EQ(phantom.m, 5);
  EXPECT_FALSE(phantom.real);
  EXPECT_EQ(cluster_a_tile(phantom, 5), 4);
}

TEST(WgmmaCluster, TheWalkCheckSeesOverlapsGapsAndSplitColumns) {
  const Walk overlap = [](int u, int tm, int tn, int rank) {  // units one tile row apart
    ClusterTile t = cluster_tile_at(u, tm, tn, 8, 2, rank);
    t.m = t.m / 2 + rank;
    t.real = t.m < tm;
    return t;
  };
  EXPECT_NE(walk_problem(overlap, 6, 2), "");
  const Walk split = [](int u, int tm, int tn, int rank) {  // the two blocks on different columns of B
    ClusterTile t = cluster_tile_at(u, tm, tn, 8, 2, 0);
    t.m += rank;
    t.n = (t.n + rank) % tn;
    t.real = t.m < tm;
    return t;
  };
  EXPECT_NE(walk_problem(split, 6, 3), "");
  const Walk gap = [](int u, int tm, int tn, int rank) {  // the odd last row dropped
    ClusterTile t = cluster_tile_at(u, tm, tn, 8, 2, rank);
    if (t.m == tm - 1 && tm % 2) t.real = false;
    return t;
  };
  EXPECT_NE(walk_problem(gap, 5, 2), "");
}

namespace {

template <class Cfg>
void expect_b_split(const char* name) {
  std::vector<int> copies(Cfg::kBBoxes, 0);
  for (int rank = 0; rank < Cfg::kCluster; ++rank) {
    const int first = cluster_first_b_box(rank, Cfg::kBBoxes, Cfg::kCluster);
    for (int j = first; j < first + Cfg::kOwnBBoxes; ++j) {
      ASSERT_TRUE(j >= 0 && j < Cfg::kBBoxes) << name << ": rank " << rank << " box " << j;
      ++copies[j];
    }
  }
  for (int j = 0; j < Cfg::kBBoxes; ++j) EXPECT_EQ(copies[j], 1) << name << ": B box " << j << " copied once";
  // What lands in each block a stage: its A and every box of B, its own and its peers'.
  EXPECT_EQ(Cfg::kLandingBytes, Cfg::kABytes + Cfg::kCluster * Cfg::kOwnBBoxes * kBBoxBytes) << name;
  EXPECT_EQ(Cfg::kLandingBytes, Cfg::kStageBytes) << name;
  EXPECT_EQ(Cfg::kEmptyArrivals, Cfg::kCluster * Cfg::kConsumers * 4) << name << ": a consumer warp of every block";
  EXPECT_EQ(cluster_cta_mask(Cfg::kCluster), (1u << Cfg::kCluster) - 1u) << name;
}

}  // namespace

TEST(WgmmaCluster, EachBlockCopiesItsShareOfBForBoth) {
  EXPECT_EQ(cluster_first_b_box(0, 4, 2), 0);
  EXPECT_EQ(cluster_first_b_box(1, 4, 2), 2);  // 128 x 256: boxes 2 and 3, columns 128-255
  EXPECT_EQ(cluster_first_b_box(1, 2, 2), 1);  // 128 x 128: box 1, columns 64-127
  EXPECT_EQ(cluster_cta_mask(2), 0b11u);
  EXPECT_EQ(cluster_cta_mask(1), 0b1u);
  expect_b_split<WgmmaConfig<128, 256, 4, 2>>("wgmma_f16_128x256_c2");
  expect_b_split<WgmmaConfig<128, 128, 6, 2>>("wgmma_f16_128x128_c2");
  expect_b_split<WgmmaConfig<128, 256, 4>>("wgmma_f16_128x256");
  EXPECT_EQ((WgmmaConfig<128, 256, 4>::kEmptyArrivals), 8);  // the rows without a cluster: as before
}

// The ping-pong rows' protocol (wgmma_f16_matmul.cuh's produce, pingpong_mainloop and
// consume_pingpong), replayed on the CPU: the producer and the two consumer warpgroups as
// sequences of waits and signals on modelled mbarriers (parity waits as the hardware does them)
// and named barriers, run in every interleaving a seeded scheduler picks. Each consumer must
// find its own slices where the producer put them and release them before they are
// overwritten, the tiles' MMAs must be issued in turn, every named barrier must pair a waiting
// warpgroup with a signalling one and be empty at the exit, and nothing may deadlock.
namespace {

// The protocol's choices, replaceable so a test shows the check sees a broken one.
struct PingpongRules {
  std::function<int(int)> warpgroup = pingpong_warpgroup;
  std::function<long long(int, int)> first_slice = [](int j, int ktiles) { return 1LL * j * ktiles; };
  std::function<bool(int, int)> hands_on = pingpong_hands_on;
};

enum class Op { WaitEmpty, Load, TurnSync, TurnArrive, WaitFull, Issue, Release };
struct Step {
  Op op;
  int stage = 0, parity = 0, j = 0, kt = 0;
};
using Program = std::vector<Step>;

Program producer_program(int tiles, int ktiles, int stages) {
  Program p;
  for (long long n = 0; n < 1LL * tiles * ktiles; ++n) {
    const RingTurn turn = pingpong_ring_turn(n, stages);
    const int j = static_cast<int>(n / ktiles), kt = static_cast<int>(n % ktiles);
    p.push_back({Op::WaitEmpty, turn.stage, static_cast<int>(turn.phase ^ 1u), j, kt});
    p.push_back({Op::Load, turn.stage, 0, j, kt});
  }
  return p;
}

Program consumer_program(int cw, int tiles, int ktiles, int stages, const PingpongRules& rules) {
  Program p;
  for (int j = 0; j < tiles; ++j) {
    if (rules.warpgroup(j) != cw) continue;
    if (pingpong_waits_turn(j)) p.push_back({Op::TurnSync, pingpong_turn_barrier(cw)});
    int prev = 0;
    for (int kt = 0; kt < ktiles; ++kt) {
      const RingTurn turn = pingpong_ring_turn(rules.first_slice(j, ktiles) + kt, stages);
      p.push_back({Op::WaitFull, turn.stage, static_cast<int>(turn.phase), j, kt});
      p.push_back({Op::Issue, turn.stage, 0, j, kt});
      if (kt > 0) p.push_back({Op::Release, prev, 0, j, kt - 1});
      prev = turn.stage;
    }
    if (rules.hands_on(j, tiles)) p.push_back({Op::TurnArrive, pingpong_turn_barrier(1 - cw)});
    p.push_back({Op::Release, prev, 0, j, ktiles - 1});
  }
  return p;
}

struct BlockModel {
  std::vector<int> full_done, empty_done, empty_count;  // completed phases, arrivals in the phase
  std::vector<std::pair<int, int>> held;                // the (tile, slice) each stage holds
  int sync_in[3] = {0, 0, 0}, arrive_in[3] = {0, 0, 0};
  std::vector<std::pair<int, int>> issued;
  std::string error;
  explicit BlockModel(int stages)
      : full_done(stages, 0), empty_done(stages, 0), empty_count(stages, 0), held(stages, {-1, -1}) {}
};

// One step of an agent if it can take it now (false: it waits). A parity wait passes once the
// phase of that parity is the last completed one, as mbarrier.try_wait.parity does.
bool take(BlockModel& b, const Step& s, bool& synced) {
  switch (s.op) {
    case Op::WaitEmpty:
      return b.empty_done[s.stage] % 2 != s.parity;
    case Op::Load:
      b.held[s.stage] = {s.j, s.kt}, ++b.full_done[s.stage];
      return true;
    case Op::WaitFull:
      if (b.full_done[s.stage] % 2 == s.parity) return false;
      if (b.held[s.stage] != std::make_pair(s.j, s.kt))
        b.error = "tile " + std::to_string(s.j) + " slice " + std::to_string(s.kt) + " found another in its stage";
      return true;
    case Op::Issue:
      b.issued.emplace_back(s.j, s.kt);
      return true;
    case Op::Release:
      if (b.held[s.stage] != std::make_pair(s.j, s.kt))
        b.error = "tile " + std::to_string(s.j) + " slice " + std::to_string(s.kt) + " overwritten before release";
      if ((b.empty_count[s.stage] += 4) == 4) b.empty_count[s.stage] = 0, ++b.empty_done[s.stage];  // 4 warps
      return true;
    case Op::TurnArrive:
      if ((b.arrive_in[s.stage] += 128) > 128) b.error = "a turn handed on twice before it was taken";
      return true;
    case Op::TurnSync:
      if (!synced) {
        synced = true;
        if ((b.sync_in[s.stage] += 128) > 128) b.error = "two warpgroups wait for one turn";
      }
      if (b.sync_in[s.stage] + b.arrive_in[s.stage] < kPingpongTurnThreads) return false;
      b.sync_in[s.stage] = b.arrive_in[s.stage] = 0, synced = false;
      return true;
  }
  return false;
}

// "" if the block's protocol held in this interleaving, else what broke.
std::string simulate(int tiles, int ktiles, int stages, unsigned seed, const PingpongRules& rules = {}) {
  const Program programs[3] = {producer_program(tiles, ktiles, stages),
                               consumer_program(0, tiles, ktiles, stages, rules),
                               consumer_program(1, tiles, ktiles, stages, rules)};
  std::size_t pc[3] = {0, 0, 0};
  bool synced[3] = {false, false, false};
  BlockModel b(stages);
  const std::string at = " (" + std::to_string(tiles) + " tiles, " + std::to_string(ktiles) + " slices, " +
                         std::to_string(stages) + " stages)";
  for (unsigned rng = seed * 2654435761u + 1u;;) {
    int runnable[3], count = 0;
    for (int a = 0; a < 3; ++a)
      if (pc[a] < programs[a].size()) runnable[count++] = a;
    if (count == 0) break;
    bool moved = false;
    for (int tries = 0; tries < count && !moved; ++tries) {
      rng = rng * 1103515245u + 12345u;
      const int a = runnable[(rng >> 16) % count];
      if (take(b, programs[a][pc[a]], synced[a])) ++pc[a], moved = true;
    }
    for (int a = 0; a < 3 && !moved; ++a)
      if (pc[a] < programs[a].size() && take(b, programs[a][pc[a]], synced[a])) ++pc[a], moved = true;
    if (!b.error.empty()) return b.error + at;
    if (!moved) return "deadlock" + at;
  }
  if (!std::is_sorted(b.issued.begin(), b.issued.end())) return "two tiles' MMAs interleaved" + at;
  for (int id = 1; id <= 2; ++id)
    if (b.sync_in[id] || b.arrive_in[id]) return "named barrier " + std::to_string(id) + " left half-arrived" + at;
  return "";
}

}  // namespace

TEST(WgmmaPingpong, WarpgroupsTakeAlternateTilesOfTheBlocksWalk) {
  EXPECT_EQ(pingpong_warpgroup(0), 0);
  EXPECT_EQ(pingpong_warpgroup(1), 1);
  EXPECT_EQ(pingpong_warpgroup(6), 0);
  EXPECT_EQ(pingpong_turn_barrier(0), 1);  // 0 is __syncthreads'
  EXPECT_EQ(pingpong_turn_barrier(1), 2);
  // Every tile walked by exactly one block, at 4096^3 and 8192^3 on 132 SMs and ragged grids.
  for (const auto& [units, grid] : {std::pair{1024, 132}, {4096, 132}, {1, 1}, {5, 3}, {297, 132}, {131, 132}}) {
    int sum = 0;
    for (int b = 0; b < grid; ++b) sum += pingpong_block_tiles(b, grid, units);
    EXPECT_EQ(sum, units) << units << " tiles over " << grid << " blocks";
  }
  EXPECT_EQ(pingpong_block_tiles(131, 132, 131), 0);  // a block past the tiles walks none
  EXPECT_EQ(pingpong_block_tiles(3, 132, 1024), 8);   // 3, 135, ..., 927
  // Tile j's first slice is the block's slice j ktiles: tile 3 of 5 slices in a 7-stage ring is
  // slice 15, stage 1 on the ring's third turn (parity 0).
  EXPECT_EQ(pingpong_ring_turn(15, 7).stage, 1);
  EXPECT_EQ(pingpong_ring_turn(15, 7).phase, 0u);
  EXPECT_EQ(pingpong_ring_turn(12, 7).phase, 1u);
  // Turns: tiles - 1 hand-overs and as many waits.
  for (int tiles = 1; tiles <= 9; ++tiles) {
    int waits = 0, hands = 0;
    for (int j = 0; j < tiles; ++j) waits += pingpong_waits_turn(j), hands += pingpong_hands_on(j, tiles);
    EXPECT_EQ(waits, tiles - 1);
    EXPECT_EQ(hands, tiles - 1);
  }
  EXPECT_EQ((PingpongConfig<64, 256, 5>::kEmptyArrivals), 4);  // one warpgroup reads a stage
  EXPECT_EQ((PingpongConfig<128, 128, 7>::kAccum), 128);
}

TEST(WgmmaPingpong, TheProtocolHoldsInEveryInterleavingTried) {
  // One tile (the second warpgroup idle), odd and even counts, fewer slices than stages and
  // more, the rows' ring depths.
  for (int tiles : {1, 2, 3, 4, 7, 8})
    for (int ktiles : {1, 2, 3, 5, 7, 11, 16})
      for (int stages : {2, 5, 7})
        for (unsigned seed = 0; seed < 12; ++seed) EXPECT_EQ(simulate(tiles, ktiles, stages, seed), "");
}

TEST(WgmmaPingpong, TheSimulationSeesABrokenProtocol) {
  PingpongRules always_hand_on;
  always_hand_on.hands_on = [](int, int) { return true; };
  EXPECT_NE(simulate(3, 4, 5, 0, always_hand_on), "") << "a last hand-over nobody takes";
  PingpongRules own_slices_only;  // each warpgroup counting only its own tiles' slices
  own_slices_only.first_slice = [](int j, int ktiles) { return 1LL * (j / 2) * ktiles; };
  EXPECT_NE(simulate(4, 3, 5, 0, own_slices_only), "");
  PingpongRules one_warpgroup;  // every tile to warpgroup 0: it waits for a turn nobody gives
  one_warpgroup.warpgroup = [](int) { return 0; };
  EXPECT_NE(simulate(2, 3, 5, 0, one_warpgroup), "");
}
