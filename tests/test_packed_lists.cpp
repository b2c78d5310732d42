// The compressed posting lists' codec (variants/intersect/packed_lists.hpp): every list of every
// shape comes back exactly, block by block and whole; each block is packed at the width of its
// widest gap, no wider; the GOV2-shaped set packs smaller than its raw ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "harness/intersect/generate.hpp"
#include "kernels/intersect/packed_decode.hpp"
#include "runtime/error.hpp"
#include "variants/intersect/packed_lists.hpp"

using namespace distancies;
using namespace distancies::intersect;

namespace {

// A strictly increasing list of n ids whose gaps are drawn below `max_gap` (+1), from `first`.
std::vector<std::uint32_t> list_with_gaps(std::size_t n, std::uint32_t first, std::uint64_t max_gap,
                                          std::mt19937_64& rng) {
  std::vector<std::uint32_t> l;
  std::uint64_t id = first;
  for (std::size_t i = 0; i < n && id <= std::numeric_limits<std::uint32_t>::max(); ++i) {
    l.push_back(static_cast<std::uint32_t>(id));
    id += 1 + (max_gap ? rng() % (max_gap + 1) : 0);
  }
  return l;
}

void expect_round_trip(const PostingIndex& index) {
  const PackedLists p = pack_lists(index);
  ASSERT_EQ(p.lists(), index.lists());
  std::uint32_t block[kPackBlock];
  for (std::size_t l = 0; l < index.lists(); ++l) {
    const ListView v = index.list(l);
    const std::vector<std::uint32_t> want(v.begin(), v.end());
    EXPECT_EQ(unpack_list(p, l), want) << "list " << l;
    ASSERT_EQ(p.blocks(l), (v.size + kPackBlock - 1) / kPackBlock) << "list " << l;
    for (std::size_t b = 0; b < p.blocks(l); ++b) {
      const int n = unpack_block(p, l, b, block);
      ASSERT_EQ(n, static_cast<int>(std::min<std::size_t>(kPackBlock, v.size - b * kPackBlock)));
      EXPECT_TRUE(std::equal(block, block + n, v.ids + b * kPackBlock)) << "list " << l << " block " << b;
      // The width is the widest gap's, no wider.
      std::uint32_t widest = 0;
      for (int i = 1; i < n; ++i) widest = std::max(widest, block[i] - block[i - 1] - 1);
      EXPECT_EQ(p.block_bits[p.list_block[l] + b], gap_bits(widest)) << "list " << l << " block " << b;
    }
  }
}

// Every length around the block size, every width from 0 (consecutive ids) to 32 (the widest
// gap an id can have), lists starting at 0 and near the top of the id range, and empty lists.
PostingIndex every_shape() {
  std::mt19937_64 rng(20261128);
  PostingIndex index;
  for (std::size_t n : {0, 1, 2, 31, 127, 128, 129, 255, 256, 257, 1000})
    for (std::uint64_t max_gap : {0ull, 1ull, 7ull, 1000ull, 1ull << 20, 1ull << 31})
      for (std::uint32_t first : {0u, 12345u}) index.add(list_with_gaps(n, first, max_gap, rng));
  index.add({0u, 0xffffffffu});                               // the widest gap there is
  index.add({0u, 1u, 0xfffffffeu, 0xffffffffu});              // widths 0 and 32 in one block
  index.add(list_with_gaps(300, 0xffffffffu - 299, 0, rng));  // consecutive up to the last id
  return index;
}

}  // namespace

TEST(PackedLists, GapBits) {
  EXPECT_EQ(gap_bits(0), 0);
  EXPECT_EQ(gap_bits(1), 1);
  EXPECT_EQ(gap_bits(2), 2);
  EXPECT_EQ(gap_bits(255), 8);
  EXPECT_EQ(gap_bits(256), 9);
  EXPECT_EQ(gap_bits(0x7fffffffu), 31);
  EXPECT_EQ(gap_bits(0x80000000u), 32);
  EXPECT_EQ(gap_bits(0xfffffffeu), 32);
}

TEST(PackedLists, EveryShapeComesBackExactly) { expect_round_trip(every_shape()); }

// The GPU's warp decode (kernels/intersect/packed_decode.hpp) emulated lane by lane, the warp's
// scan done in order: every block of every shape decodes to the codec's ids.
TEST(PackedLists, TheWarpDecodeEmulatedEqualsTheCodec) {
  const PackedLists p = pack_lists(every_shape());
  std::uint32_t want[kPackBlock];
  for (std::size_t l = 0; l < p.lists(); ++l)
    for (std::size_t b = 0; b < p.blocks(l); ++b) {
      const int n = unpack_block(p, l, b, want);
      const std::size_t at = p.list_block[l] + b;
      std::uint32_t before = 0;
      for (int lane = 0; lane < 32; ++lane) {
        std::uint32_t sums[packed_decode::kIdsPerLane], ids[packed_decode::kIdsPerLane];
        const std::uint32_t total =
            packed_decode::lane_sums(p.words.data() + p.block_word[at], p.block_bits[at], n, lane, sums);
        packed_decode::lane_ids(p.block_first[at], lane, before, sums, ids);
        before += total;
        for (int t = 0; t < packed_decode::kIdsPerLane; ++t) {
          const int i = packed_decode::kIdsPerLane * lane + t;
          if (i < n) {
            ASSERT_EQ(ids[t], want[i]) << "list " << l << " block " << b << " id " << i;
          }
        }
      }
    }
}

TEST(PackedLists, TheGov2ShapedSetPacksSmallerThanItsIds) {
  Gov2Shape shape;
  shape.lists = 200;
  shape.queries = 1;
  const DataSet set = gov2_shaped(shape, 7);
  expect_round_trip(set.index);
  const PackedLists p = pack_lists(set.index);
  const double raw =
      double(set.index.ids.size() * sizeof(std::uint32_t) + set.index.offsets.size() * sizeof(std::uint64_t));
  EXPECT_LT(double(p.bytes()), raw);
  RecordProperty("packed_over_raw", std::to_string(double(p.bytes()) / raw));
}

TEST(PackedLists, ABlockOrListOutOfRangeIsAnError) {
  PostingIndex index;
  index.add({1, 2, 3});
  index.add({});
  const PackedLists p = pack_lists(index);
  std::uint32_t out[kPackBlock];
  EXPECT_THROW(unpack_block(p, 0, 1, out), Error);
  EXPECT_THROW(unpack_block(p, 1, 0, out), Error);
  EXPECT_THROW(unpack_block(p, 2, 0, out), Error);
  EXPECT_THROW(unpack_list(p, 2), Error);
  EXPECT_TRUE(unpack_list(p, 1).empty());
  EXPECT_EQ(p.bytes(), p.words.size() * 4 + p.block_first.size() * 4 + p.block_word.size() * 8 + p.block_bits.size() +
                           p.list_block.size() * 8 + p.lengths.size() * 8);
}
