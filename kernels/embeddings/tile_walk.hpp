// The row tiles one launch of the wgmma walk (wgmma_filter.cuh) takes, by `stride`: above 0 every
// stride-th (tile v is v stride: 1 all of them, more the sample that refines the thresholds);
// below 0 every tile but the (-stride)-th ones (the int8 walk's second pass, after a first over
// those). Shared with the host, where tests/test_stage_ring.cpp checks that a stride and its
// complement take every tile once.
#pragma once
#include "kernels/common/host_device.hpp"

namespace distancies {

struct TileWalk {
  long long all;
  int stride;
  DISTANCIES_HD long long count() const {
    if (stride > 0) return (all + stride - 1) / stride;
    return all - (all - stride - 1) / -stride;
  }
  DISTANCIES_HD long long tile(long long v) const {
    if (stride > 0) return v * stride;
    const long long s = -stride;
    return v / (s - 1) * s + v % (s - 1) + 1;
  }
};

}  // namespace distancies
