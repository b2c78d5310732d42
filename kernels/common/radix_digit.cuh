// The step every radix select repeats: from a pass's 256-bin histogram of the current digit (in
// shared memory), the digit that holds the `remaining`-th largest key (1-based) among the keys
// counted, found by one warp. Lane l holds digits 255 - 8l down to 248 - 8l; a warp scan gives the
// keys above each lane's digits, and the lane where the count crosses `remaining` walks its
// eight. (One thread walking the histogram in global memory, a dependent L2 read per digit, took
// 10-27 us of a pass.) Shared by the one-query select (radix_select.cu) and the batch's
// per-query select (mma_filter_scan.cuh).
#pragma once

namespace distancies {

struct DigitChoice {
  int digit = -1;  // on the one lane that found it; -1 on the others
  int still = 0;   // where the wanted key ranks among the keys of that digit (1-based)
};

// Whole warp. Fewer keys than `remaining` (a caller that cannot rule it out): digit 0 on lane 31,
// as the walk would end.
__device__ inline DigitChoice warp_choose_digit(const unsigned* h, int remaining, int lane) {
  int c[8], sum = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) sum += c[j] = static_cast<int>(h[255 - 8 * lane - j]);
  int incl = sum;
#pragma unroll
  for (int off = 1; off < 32; off *= 2) {
    const int t = __shfl_up_sync(0xffffffffu, incl, off);
    if (lane >= off) incl += t;
  }
  int above = incl - sum;
  const bool mine = above < remaining && remaining <= incl;
  const unsigned who = __ballot_sync(0xffffffffu, mine);
  DigitChoice out;
  if (mine) {
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      if (out.digit < 0 && above + c[j] >= remaining) out.digit = 255 - 8 * lane - j;
      if (out.digit < 0) above += c[j];
    }
  } else if (who == 0 && lane == 31) {
    out.digit = 0;
    above = incl - c[7];
  }
  if (out.digit >= 0) out.still = remaining - above;
  return out;
}

}  // namespace distancies
