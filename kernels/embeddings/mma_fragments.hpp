// Which values each lane hands to mma.sync.m16n8k16 (fp16, row.col) in the filtered batch scan,
// and which scores it gets back: plain functions shared by the kernel and by the CPU test that
// replays the PTX ISA's fragment layout (tests/test_mma_fragments.cpp).
//
// The queries are the MMA's A (16 a tile: queries g and g + 8 of lane = 4 g + t), the model's rows
// its B (8 a tile: row g). A lane loads 16 bytes (8 halves) of a 32-column chunk: columns
// 8t ... 8t + 7 of its row, and of its two queries when the query fragments are made. A dot
// product may add its terms in any order, so those 8 columns serve as the MMA's k = {2t, 2t + 1,
// 2t + 8, 2t + 9} of two k-steps: step s takes the 32-bit words 2s and 2s + 1. Then a row's
// 16-byte load is, as it lands, its B fragments of both steps (no register shuffles), and the
// queries' A fragments are stored once in that order (one 16-byte shared load a step).
#pragma once
#include "kernels/common/host_device.hpp"

namespace distancies::mma_fragments {

template <class Word4>
DISTANCIES_HD inline unsigned word(const Word4& v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// The A fragment of k-step `step` (0 or 1) from the loads of queries g (`lo`) and g + 8 (`hi`):
// {query g, k 2t..}, {query g + 8, k 2t..}, {query g, k 2t + 8..}, {query g + 8, k 2t + 8..}.
template <class Word4>
DISTANCIES_HD inline void a_fragment(int step, const Word4& lo, const Word4& hi, unsigned (&a)[4]) {
  a[0] = word(lo, 2 * step);
  a[1] = word(hi, 2 * step);
  a[2] = word(lo, 2 * step + 1);
  a[3] = word(hi, 2 * step + 1);
}

// The B fragment of k-step `step` from the load of row g: {k 2t.., row g}, {k 2t + 8.., row g}.
template <class Word4>
DISTANCIES_HD inline void b_fragment(int step, const Word4& row, unsigned (&b)[2]) {
  b[0] = word(row, 2 * step);
  b[1] = word(row, 2 * step + 1);
}

// The first column of the chunk a lane loads (halves).
DISTANCIES_HD inline int lane_column(int lane) { return 8 * (lane % 4); }

// Accumulator element e (0..3) of a lane: the query of the 16 and the row of the 8.
DISTANCIES_HD inline int c_query(int lane, int e) { return lane / 4 + 8 * (e >> 1); }
DISTANCIES_HD inline int c_row(int lane, int e) { return 2 * (lane % 4) + (e & 1); }

}  // namespace distancies::mma_fragments
