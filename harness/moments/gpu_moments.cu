#include "harness/moments/gpu_moments.hpp"

#include <vector>

#include "kernels/moments/moments_fill.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/error.hpp"

namespace distancies {

MomentsOutputBuffers::MomentsOutputBuffers(int cols)
    : cols_(cols), buf_(4 * static_cast<std::size_t>(cols > 0 ? cols : 1) * sizeof(double), "moments output") {}

MomentsOutput MomentsOutputBuffers::view() const {
  double* p = buf_.as<double>();
  return {p, p + cols_, p + 2 * static_cast<std::size_t>(cols_), p + 3 * static_cast<std::size_t>(cols_)};
}

ColumnMoments MomentsOutputBuffers::download() const {
  ColumnMoments out(cols_);
  const MomentsOutput v = view();
  const std::size_t bytes = cols_ * sizeof(double);
  CUDA_CHECK(cudaMemcpy(out.mean.data(), v.mean, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.variance.data(), v.variance, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.skewness.data(), v.skewness, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.kurtosis.data(), v.kurtosis, bytes, cudaMemcpyDeviceToHost));
  return out;
}

ColumnMoments run_moments(const MomentsVariant& v, const MatrixView& m, MomentEstimator e) {
  require_device();
  if (m.rows < 1 || m.cols < 1) throw Error("moments: the matrix needs at least one row and one column");
  const bool want_col_major = v.layout == MatrixLayout::ColumnMajor;
  // Packed in the variant's layout; a view in the same layout keeps its leading dimension.
  std::vector<float> packed;
  const float* src = m.x;
  long long ld = m.ld;
  long long count = m.col_major ? m.ld * (m.cols - 1) + m.rows : m.ld * (m.rows - 1) + m.cols;
  if (m.col_major != want_col_major) {
    packed.resize(static_cast<std::size_t>(m.rows) * m.cols);
    for (long long r = 0; r < m.rows; ++r)
      for (long long c = 0; c < m.cols; ++c) packed[want_col_major ? c * m.rows + r : r * m.cols + c] = m.at(r, c);
    src = packed.data();
    ld = want_col_major ? m.rows : m.cols;
    count = static_cast<long long>(packed.size());
  }
  DeviceBuffer d(static_cast<std::size_t>(count) * sizeof(float), "moments matrix");
  CUDA_CHECK(cudaMemcpy(d.get(), src, static_cast<std::size_t>(count) * sizeof(float), cudaMemcpyHostToDevice));
  MomentsOutputBuffers out(m.cols);
  MomentsScratch scratch;
  const MomentsInput in{d.as<float>(), m.rows, m.cols, ld, e};
  v.launch(in, out.view(), scratch, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  return out.download();
}

void fill_moments_matrix(float* d, std::uint64_t seed, long long rows, int cols, bool col_major, cudaStream_t s) {
  const int blocks = device_status().props.multiProcessorCount * 8;
  if (col_major)
    moments_fill_kernel<true><<<blocks, 256, 0, s>>>(d, seed, rows, cols);
  else
    moments_fill_kernel<false><<<blocks, 256, 0, s>>>(d, seed, rows, cols);
  CUDA_CHECK_LAUNCH();
}

}  // namespace distancies
