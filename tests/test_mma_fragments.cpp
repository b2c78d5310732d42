// The filtered batch scan's use of mma.sync.m16n8k16 (kernels/embeddings/mma_fragments.hpp),
// replayed on the CPU against the PTX ISA's fragment layout: every lane's 16-byte loads, handed
// over as the kernel hands them, must give each k-step a consistent permutation of the chunk's
// columns (the same for rows and queries), cover the 32 columns once over the two steps, put
// queries g and g + 8 and row g where the layout wants them, and the accumulators must be read
// back as the queries and rows they are.
#include <gtest/gtest.h>

#include <set>

#include "kernels/embeddings/mma_fragments.hpp"

namespace {

using namespace distancies::mma_fragments;

struct Word4 {
  unsigned x, y, z, w;
};

// Each 16-bit half carries who it is: (row or query) * 64 + column within the chunk.
unsigned pack(unsigned lo_half, unsigned hi_half) { return lo_half | hi_half << 16; }
Word4 lane_load(int who, int first_col) {
  auto id = [&](int j) { return static_cast<unsigned>(who * 64 + first_col + j); };
  return {pack(id(0), id(1)), pack(id(2), id(3)), pack(id(4), id(5)), pack(id(6), id(7))};
}
unsigned half_of(unsigned word, int h) { return h ? word >> 16 : word & 0xffffu; }

// PTX ISA, mma.m16n8k16 with .f16 A (row) and B (col), lane = 4 groupID + threadID_in_group:
// A element i = 2 r + h of register r: row groupID + 8 for r odd, column 2 tig + h + 8 for r >= 2;
// B element of register r: k = 2 tig + h + 8 r, column (query) groupID;
// C element e: row groupID + 8 for e >= 2, column 2 tig + (e & 1).
int ptx_a_row(int lane, int r) { return lane / 4 + 8 * (r & 1); }
int ptx_a_k(int lane, int r, int h) { return 2 * (lane % 4) + h + 8 * (r >> 1); }
int ptx_b_k(int lane, int r, int h) { return 2 * (lane % 4) + h + 8 * r; }
int ptx_c_row(int lane, int e) { return lane / 4 + 8 * (e >> 1); }
int ptx_c_col(int lane, int e) { return 2 * (lane % 4) + (e & 1); }

TEST(MmaFragments, EveryStepIsOnePermutationOfTheChunkForRowsAndQueries) {
  std::set<int> chunk_columns;
  for (int step = 0; step < 2; ++step) {
    int a_col[16][16], b_col[16][8];  // physical column at (query, k) and (k, row)
    for (auto& r : a_col)
      for (int& v : r) v = -1;
    for (auto& r : b_col)
      for (int& v : r) v = -1;
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4;
      // Queries (A) g and g + 8, model row (B) g.
      const Word4 lo = lane_load(g, lane_column(lane)), hi = lane_load(g + 8, lane_column(lane));
      const Word4 row = lane_load(g, lane_column(lane));
      unsigned a[4], b[2];
      a_fragment(step, lo, hi, a);
      b_fragment(step, row, b);
      for (int r = 0; r < 4; ++r)
        for (int h = 0; h < 2; ++h) {
          const unsigned v = half_of(a[r], h);
          const int row = ptx_a_row(lane, r), k = ptx_a_k(lane, r, h);
          EXPECT_EQ(static_cast<int>(v / 64), row) << "lane " << lane << " A reg " << r << " holds another query";
          ASSERT_EQ(a_col[row][k], -1) << "A (" << row << ", " << k << ") given twice";
          a_col[row][k] = static_cast<int>(v % 64);
        }
      for (int r = 0; r < 2; ++r)
        for (int h = 0; h < 2; ++h) {
          const unsigned v = half_of(b[r], h);
          const int k = ptx_b_k(lane, r, h), n = g;
          EXPECT_EQ(static_cast<int>(v / 64), n) << "lane " << lane << " B reg " << r << " holds another row";
          ASSERT_EQ(b_col[k][n], -1) << "B (" << k << ", " << n << ") given twice";
          b_col[k][n] = static_cast<int>(v % 64);
        }
    }
    // One permutation: the column behind k is the same for every row and every query.
    for (int k = 0; k < 16; ++k) {
      const int col = a_col[0][k];
      ASSERT_GE(col, 0);
      for (int m = 0; m < 16; ++m) EXPECT_EQ(a_col[m][k], col) << "k " << k << " query " << m;
      for (int n = 0; n < 8; ++n) EXPECT_EQ(b_col[k][n], col) << "k " << k << " row " << n;
      EXPECT_TRUE(chunk_columns.insert(col).second) << "column " << col << " used twice";
    }
  }
  ASSERT_EQ(chunk_columns.size(), 32u);
  EXPECT_EQ(*chunk_columns.begin(), 0);
  EXPECT_EQ(*chunk_columns.rbegin(), 31);
}

TEST(MmaFragments, AccumulatorsAreReadBackAsTheirQueriesAndRows) {
  std::set<int> seen;
  for (int lane = 0; lane < 32; ++lane)
    for (int e = 0; e < 4; ++e) {
      EXPECT_EQ(c_query(lane, e), ptx_c_row(lane, e)) << "lane " << lane << " e " << e;
      EXPECT_EQ(c_row(lane, e), ptx_c_col(lane, e)) << "lane " << lane << " e " << e;
      EXPECT_TRUE(seen.insert(c_query(lane, e) * 8 + c_row(lane, e)).second);
    }
  EXPECT_EQ(seen.size(), 128u);  // every (query, row) of the 16 x 8 tile exactly once
}

// The lanes' loads tile the chunk: queries g and g + 8 and row g, 8 columns each, 4 lanes a row.
TEST(MmaFragments, LanesLoadTheWholeChunk) {
  std::set<int> cols;
  for (int lane = 0; lane < 4; ++lane)
    for (int j = 0; j < 8; ++j) EXPECT_TRUE(cols.insert(lane_column(lane) + j).second);
  EXPECT_EQ(cols.size(), 32u);
  for (int lane = 0; lane < 32; ++lane) EXPECT_EQ(lane_column(lane), lane_column(lane % 4));
}

}  // namespace
