// The one order every search returns, shared by host and device code: similarity
// descending, then row ascending.
#pragma once

#if defined(__CUDACC__)
#define DISTANCIES_HD __host__ __device__
#else
#define DISTANCIES_HD
#endif

namespace distancies {

DISTANCIES_HD inline bool ranks_before(float sa, int ra, float sb, int rb) {
  return sa > sb || (sa == sb && ra < rb);
}

}  // namespace distancies
