// The wgmma walk's ring bookkeeping (kernels/embeddings/stage_ring.hpp), replayed on the CPU: the
// producer's running (stage, phase) and each consumer warpgroup's, which skips the other's tiles,
// must name item i's stage i % S and parity (i / S) & 1 for every item they touch, for the ring
// depths and column-block counts the walk uses (and a few it does not); and the tiles a launch
// walks (kernels/embeddings/tile_walk.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/embeddings/stage_ring.hpp"
#include "kernels/embeddings/tile_walk.hpp"

namespace {

using distancies::StageRing;
using distancies::TileWalk;

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
          for (int kb = 0; kb < kblocks; ++kb, r.advance(1, S))
            expect_at(r, static_cast<long long>(tile) * kblocks + kb, S);
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

// The walk's tiles (kernels/embeddings/tile_walk.hpp): a positive stride takes tiles 0, s, 2 s ...
// in order, its complement (-s) every other tile in order, and together they take each tile of
// the model once, for every model length around the strides' multiples.
TEST(TileWalk, AStrideAndItsComplementTakeEveryTileOnce) {
  for (int s : {2, 3, 4, 8, 32})
    for (long long all = 0; all <= 5 * s + 3; ++all) {
      SCOPED_TRACE("stride " + std::to_string(s) + ", tiles " + std::to_string(all));
      std::vector<int> seen(static_cast<std::size_t>(all), 0);
      const TileWalk first{all, s}, rest{all, -s};
      long long last = -1;
      for (long long v = 0; v < first.count(); ++v) {
        const long long t = first.tile(v);
        ASSERT_TRUE(t >= 0 && t < all && t % s == 0 && t > last) << "v " << v << ": tile " << t;
        ++seen[static_cast<std::size_t>(t)];
        last = t;
      }
      last = -1;
      for (long long v = 0; v < rest.count(); ++v) {
        const long long t = rest.tile(v);
        ASSERT_TRUE(t >= 0 && t < all && t % s != 0 && t > last) << "v " << v << ": tile " << t;
        ++seen[static_cast<std::size_t>(t)];
        last = t;
      }
      for (long long t = 0; t < all; ++t) EXPECT_EQ(seen[static_cast<std::size_t>(t)], 1) << "tile " << t;
    }
  const TileWalk every{10, 1};
  EXPECT_EQ(every.count(), 10);
  EXPECT_EQ(every.tile(9), 9);
}

}  // namespace
