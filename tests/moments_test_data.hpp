// Matrices the moments tests share: offset data, constant, non-finite and one-row columns.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/moments/moments_data.cuh"

namespace distancies::test {

// Row-major rows x cols: 1e6 plus a spread of about 1 on the float grid at 1e6 (steps of
// 1/16): the case where sums of powers lose every digit and a float mean is inexact.
inline std::vector<float> offset_matrix(long long rows, int cols, double offset = 1e6) {
  std::vector<float> x(static_cast<std::size_t>(rows) * cols);
  for (long long r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const float u = moments_element(7, r, c, cols);  // in [0, 1), skewed
      x[r * cols + c] = static_cast<float>(offset + std::round((4.0 * u - 1.0) * 16.0) / 16.0);
    }
  return x;
}

// Column 0 constant 0.1f, column 1 has a NaN, column 2 an Inf, column 3 -Inf and a NaN,
// column 4 ordinary, column 5 constant -3.
inline std::vector<float> nasty_matrix(long long rows) {
  const int cols = 6;
  std::vector<float> x(static_cast<std::size_t>(rows) * cols);
  for (long long r = 0; r < rows; ++r) {
    float* row = &x[r * cols];
    row[0] = 0.1f;
    row[1] = row[2] = row[3] = row[4] = moments_element(3, r, 0, 1);
    row[5] = -3.0f;
  }
  x[(rows / 2) * cols + 1] = std::numeric_limits<float>::quiet_NaN();
  x[(rows - 1) * cols + 2] = std::numeric_limits<float>::infinity();
  x[0 * cols + 3] = -std::numeric_limits<float>::infinity();
  x[(rows / 3) * cols + 3] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

}  // namespace distancies::test
