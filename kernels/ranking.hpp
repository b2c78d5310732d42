// The one order every search returns, shared by host and device code: similarity
// descending, then row ascending.
#pragma once
#include "kernels/host_device.hpp"

namespace distancies {

DISTANCIES_HD inline bool ranks_before(float sa, int ra, float sb, int rb) {
  return sa > sb || (sa == sb && ra < rb);
}

}  // namespace distancies
