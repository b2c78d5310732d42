// Facts about a model's row norms, which every bound on a reduced scan rests on.
#pragma once

namespace distancies {

struct NormRange {
  float min_norm = 0;  // smallest positive norm (+inf when every row is zero)
  float max_norm = 0;  // largest norm
  bool finite = true;  // no NaN or Inf norm (a non-finite value or an overflowing row)
};

}  // namespace distancies
