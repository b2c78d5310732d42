// The compressed posting lists' codec (variants/intersect/packed_lists.hpp): every list of every
// shape comes back exactly, block by block and whole; each block is packed at the width of its
// widest gap, no wider, and keeps every 32nd id as an anchor; the device's steps (the warp decode,
// the one-thread search), emulated on the host, agree with the codec; the GOV2-shaped set packs
// smaller than its raw ids.
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
  std::uint64_t words = 0;
  for (std::size_t l = 0; l < index.lists(); ++l) words += p.list_words(l);
  EXPECT_EQ(words, p.words.size());  // each list's words, and no other
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
      for (int a = 0; a * kPackAnchor < n; ++a)
        EXPECT_EQ(p.anchors[p.list_anchor[l] + b * kAnchorsPerBlock + a], block[a * kPackAnchor])
            << "list " << l << " block " << b << " anchor " << a;
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
  // Far from evenly spread (the search's guess is wrong): two dense runs a wide jump apart, and
  // one dense run after sparse ids.
  std::vector<std::uint32_t> skewed = list_with_gaps(700, 0, 0, rng);
  for (std::uint32_t id : list_with_gaps(700, 3000000000u, 3, rng)) skewed.push_back(id);
  index.add(skewed);
  std::vector<std::uint32_t> tail = list_with_gaps(40, 10, 1u << 24, rng);
  for (std::uint32_t id : list_with_gaps(2000, tail.back() + 5, 0, rng)) tail.push_back(id);
  index.add(tail);
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
        packed_decode::lane_ids(p.first_id(l, b), lane, before, sums, ids);
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

// The device's one-thread search (packed_decode::contains) emulated: every id of every list of
// every shape is found, and its neighbours, the ends of the id range and the ids between anchors
// that are not in the list are not.
TEST(PackedLists, TheSearchEmulatedFindsExactlyTheListsIds) {
  const PostingIndex index = every_shape();
  const PackedLists p = pack_lists(index);
  for (std::size_t l = 0; l < index.lists(); ++l) {
    const ListView v = index.list(l);
    const packed_decode::ListView pv = list_view(p, l);
    std::vector<std::uint32_t> asks = {0u, 1u, 0xfffffffeu, 0xffffffffu};
    for (std::size_t i = 0; i < v.size; ++i)
      for (std::int64_t d : {-1, 0, 1}) {
        const std::int64_t x = std::int64_t(v.ids[i]) + d;
        if (x >= 0 && x <= 0xffffffffll) asks.push_back(static_cast<std::uint32_t>(x));
      }
    for (std::uint32_t x : asks)
      ASSERT_EQ(packed_decode::contains(pv, x), std::binary_search(v.begin(), v.end(), x))
          << "list " << l << " id " << x;
  }
  EXPECT_THROW(list_view(p, p.lists()), Error);
}

// The anchors' search: the guess, the galloping either way and the binary search give the last
// anchor not above x on even, skewed and two-valued arrays of every length up to 70.
TEST(PackedLists, TheAnchorSearchFindsTheLastAnchorNotAboveTheId) {
  std::mt19937_64 rng(7);
  for (std::size_t n = 1; n <= 70; ++n)
    for (int shape = 0; shape < 3; ++shape) {
      std::vector<std::uint32_t> a;
      std::uint64_t id = shape == 2 ? 0xffffffffull - 4 * n : 5;
      for (std::size_t i = 0; i < n; ++i) {
        a.push_back(static_cast<std::uint32_t>(id));
        id += shape == 0 ? 1 + rng() % 100 : shape == 1 && i == n / 2 ? 1000000 : shape == 1 ? 1 : 3;
      }
      const std::uint64_t lowest = a.front(), highest = a.back();
      for (std::uint64_t x = lowest; x <= std::min<std::uint64_t>(highest + 2, 0xffffffffull); ++x) {
        const auto want = static_cast<std::uint64_t>(std::upper_bound(a.begin(), a.end(), x) - a.begin()) - 1;
        ASSERT_EQ(packed_decode::last_anchor_at_most(a.data(), n, static_cast<std::uint32_t>(x)), want)
            << "n " << n << " shape " << shape << " x " << x;
        if (x > lowest + 500 && x + 1000 < highest) x = highest - 1000;  // over the wide jump
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
  EXPECT_EQ(p.bytes(), p.words.size() * 4 + p.anchors.size() * 4 + p.block_word.size() * 8 + p.block_bits.size() +
                           p.list_block.size() * 8 + p.list_anchor.size() * 8 + p.lengths.size() * 8);
  EXPECT_EQ(p.anchors.size(), 1u);  // a list of three ids keeps its first whole
  EXPECT_EQ(p.list_words(0), 0u);   // consecutive ids: gaps of width 0 take no word
  EXPECT_EQ(p.list_words(1), 0u);
}
