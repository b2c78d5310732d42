// Which values each lane hands to mma.sync.m16n8k16 (fp16, row.col) in the filtered batch scan,
// and which scores it gets back: plain functions shared by the kernel and by the CPU test that
// replays the PTX ISA's fragment layout (tests/test_mma_fragments.cpp).
//
// Lane = 4 g + t. A lane loads 16 bytes (8 halves) of a 32-column chunk: columns 8t ... 8t + 7 of
// rows g and g + 8 (`lo`, `hi`) and of query g (`q`). A dot product may add its terms in any
// order, so those 8 columns serve as the MMA's columns {2t, 2t + 1, 2t + 8, 2t + 9} of two k-steps:
// step 0 takes the 32-bit words .x and .y, step 1 .z and .w. Rows and queries are permuted alike.
#pragma once
#include "kernels/common/host_device.hpp"

namespace distancies::mma_fragments {

// The A fragment of k-step `step` (0 or 1): {row g, cols 2t..}, {row g + 8, cols 2t..},
// {row g, cols 2t + 8..}, {row g + 8, cols 2t + 8..} in the PTX ISA's order.
template <class Word4>
DISTANCIES_HD inline void a_fragment(int step, const Word4& lo, const Word4& hi, unsigned (&a)[4]) {
  a[0] = step == 0 ? lo.x : lo.z;
  a[1] = step == 0 ? hi.x : hi.z;
  a[2] = step == 0 ? lo.y : lo.w;
  a[3] = step == 0 ? hi.y : hi.w;
}

// The B fragment of k-step `step`: {k = 2t.., query g}, {k = 2t + 8.., query g}.
template <class Word4>
DISTANCIES_HD inline void b_fragment(int step, const Word4& q, unsigned (&b)[2]) {
  b[0] = step == 0 ? q.x : q.z;
  b[1] = step == 0 ? q.y : q.w;
}

// The first column of the chunk a lane loads (halves).
DISTANCIES_HD inline int lane_column(int lane) { return 8 * (lane % 4); }

// Accumulator element e (0..3) of a lane: the row of the 16-row group and the query of the 8.
DISTANCIES_HD inline int c_row(int lane, int e) { return lane / 4 + 8 * (e >> 1); }
DISTANCIES_HD inline int c_query(int lane, int e) { return 2 * (lane % 4) + (e & 1); }

}  // namespace distancies::mma_fragments
