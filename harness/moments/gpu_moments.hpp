// Running a moments variant: device output arrays, a host matrix in and results out, and the
// benchmark matrix filled on the device.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "harness/moments/oracle.hpp"
#include "runtime/device.hpp"
#include "variants/moments/registry.hpp"

namespace distancies {

// The four result arrays on the device, `cols` doubles each.
class MomentsOutputBuffers {
 public:
  explicit MomentsOutputBuffers(int cols);
  MomentsOutput view() const;
  ColumnMoments download() const;  // synchronises

 private:
  int cols_;
  DeviceBuffer buf_;
};

// Copies the matrix to the device in the variant's layout (transposing on the host when the
// view's layout differs), runs it once and returns the results. Throws Error on bad input.
ColumnMoments run_moments(const MomentsVariant& v, const MatrixView& m, MomentEstimator e);

// Fills `d` with the benchmark matrix (kernels/moments/moments_data.cuh), ld = cols
// (row-major) or rows (column-major).
void fill_moments_matrix(float* d, std::uint64_t seed, long long rows, int cols, bool col_major, cudaStream_t s);

}  // namespace distancies
