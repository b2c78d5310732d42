// The Hopper FP16 matmul's shared-memory layouts (kernels/matmul/wgmma_layout.hpp), on the CPU:
// the descriptor's bit fields against values worked out by hand from the PTX ISA's "Matrix
// Descriptor Format", and, for every row's tile shape, that the element each wgmma k16 step
// reads through the kernel's descriptors (the ISA's canonical 128-byte-swizzled layouts) is the
// element TMA's 128-byte swizzle put there. The wgmma_byte model is ours: a mistake shared by
// it and the hardware's reading is not caught here, but swapped offsets, a wrong step advance
// or box stride are (the last test shows the check sees one).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <utility>

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
        const int row0 = cw * Cfg::kWgRows + i * 64;
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
