// The wgmma walk's ring and tile bookkeeping (kernels/embeddings/stage_ring.hpp), replayed on the CPU: the
// producer's running (stage, phase) and each consumer warpgroup's, which skips the other's tiles,
// must name item i's stage i % S and parity (i / S) & 1 for every item they touch, for the ring
// depths and column-block counts the walk uses (and a few it does not).
#include <gtest/gtest.h>

#include <vector>

#include "kernels/embeddings/stage_ring.hpp"

namespace {

using distancies::StageRing;

void expect_at(const StageRing& r, long long item, int S) {
  EXPECT_EQ(r.stage, static_cast<int>(item % S)) << "item " << item << ", S = " << S;
  EXPECT_EQ(r.phase, static_cast<unsigned>((item / S) & 1)) << "item " << item << ", S = " << S;
}

TEST(StageRing, ProducerNamesEveryItemsStageAndParity) {
  for (int S : {4, 6, 7, 17})
    for (int kblocks : {1, 3, 5}) {
      StageRing r;
      long long item = 0;
      for (int tile = 0; tile < 200; ++tile)
        for (int kb = 0; kb < kblocks; ++kb, ++item, r.advance(1, S)) expect_at(r, item, S);
    }
}

// Warpgroup c takes the block's tiles c, c + 2, ...: items tile * kblocks + kb of those tiles.
TEST(StageRing, EachConsumerNamesItsOwnItems) {
  for (int S : {4, 6, 7, 17})
    for (int kblocks : {1, 3, 5})
      for (int c : {0, 1}) {
        StageRing r;
        r.advance(c * kblocks, S);
        for (int tile = c; tile < 200; tile += 2) {
          for (int kb = 0; kb < kblocks; ++kb, r.advance(1, S)) expect_at(r, static_cast<long long>(tile) * kblocks + kb, S);
          r.advance(kblocks, S);  // past the other warpgroup's tile
        }
      }
}

TEST(StageRing, AdvancingByNothingStaysAndByTwoTurnsKeepsTheParity) {
  StageRing r;
  r.advance(3, 5);
  r.advance(0, 5);
  EXPECT_EQ(r.stage, 3);
  EXPECT_EQ(r.phase, 0u);
  r.advance(10, 5);  // two whole turns
  EXPECT_EQ(r.stage, 3);
  EXPECT_EQ(r.phase, 0u);
  r.advance(5, 5);
  EXPECT_EQ(r.phase, 1u);
}

}  // namespace

// The filter pass's two parts: every stride-th tile, then the rest: together every tile of the
// model once, each part in increasing order, and count() the number walked.
TEST(TileWalk, TwoPartsTakeEveryTileOnce) {
  using distancies::TileWalk;
  for (int stride : {2, 3, 4, 8, 32})
    for (long long all : {0ll, 1ll, 2ll, 3ll, 4ll, 5ll, 31ll, 32ll, 33ll, 34313ll}) {
      std::vector<int> seen(static_cast<std::size_t>(all), 0);
      for (bool rest : {false, true}) {
        const TileWalk w{stride, rest};
        long long prev = -1;
        for (long long v = 0; v < w.count(all); ++v) {
          const long long t = w.tile(v);
          ASSERT_GE(t, 0);
          ASSERT_LT(t, all) << "stride " << stride << ", rest " << rest << ", v " << v;
          EXPECT_GT(t, prev);
          EXPECT_EQ(t % stride == 0, !rest);
          prev = t;
          ++seen[static_cast<std::size_t>(t)];
        }
      }
      for (long long t = 0; t < all; ++t) EXPECT_EQ(seen[static_cast<std::size_t>(t)], 1) << "tile " << t << " of " << all;
    }
  const distancies::TileWalk whole{};
  EXPECT_EQ(whole.count(7), 7);
  EXPECT_EQ(whole.tile(6), 6);
}
