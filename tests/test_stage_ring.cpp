// The wgmma walk's ring bookkeeping (kernels/embeddings/stage_ring.hpp), replayed on the CPU: the
// producer's running (stage, phase) and each consumer warpgroup's, which skips the other's tiles,
// must name item i's stage i % S and parity (i / S) & 1 for every item they touch, for the ring
// depths and column-block counts the walk uses (and a few it does not).
#include <gtest/gtest.h>

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

}  // namespace
