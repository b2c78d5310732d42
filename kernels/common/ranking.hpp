// The one order every search returns, shared by host and device code: similarity
// descending, then row ascending. NaN ranks before nothing and nothing ranks before it, so a
// top-k list never admits one (the fused scans' behaviour); the certificate below makes the
// reduced paths' handling of NaN explicit.
#pragma once
#include "kernels/common/host_device.hpp"

namespace distancies {

DISTANCIES_HD inline bool ranks_before(float sa, int ra, float sb, int rb) { return sa > sb || (sa == sb && ra < rb); }

// What an approximate (16-bit or GEMM) similarity is ranked by: NaN (an overflow on the
// approximate path) counts as +inf, so the row stays a candidate for the exact re-rank and a
// NaN can neither hide a row nor make the last candidate's score look lower than it is.
DISTANCIES_HD inline float approx_rank_key(float s) { return s != s ? __builtin_huge_valf() : s; }

// A float's order as an unsigned (for atomicMax and radix selects); 0 is below every key.
DISTANCIES_HD inline unsigned ordered_bits(float f) {
  unsigned u;
  __builtin_memcpy(&u, &f, sizeof u);
  return u & 0x80000000u ? ~u : u | 0x80000000u;
}
// Its inverse.
DISTANCIES_HD inline float from_ordered_bits(unsigned k) {
  const unsigned u = k & 0x80000000u ? k & 0x7fffffffu : ~k;
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
}

// The certificate: the k-th best exact similarity among the candidates beats the last
// candidate's approximate one plus the error bound (so no row left out can reach the top k),
// or every row was a candidate. Never with an exact NaN among the candidates (its place in the
// fp32 order is undefined) and never when any operand is NaN (the comparison is false).
DISTANCIES_HD inline bool certifies(float kth_exact, float last_approx, float bound, bool all_rows_seen,
                                    bool exact_nan) {
  if (exact_nan) return false;
  return all_rows_seen || kth_exact > last_approx + bound;
}

}  // namespace distancies
