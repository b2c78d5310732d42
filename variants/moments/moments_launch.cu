// Dispatch for the moments kernels: geometry, scratch carving, launches.
#include <algorithm>

#include "kernels/moments/one_pass_moments.cuh"
#include "kernels/moments/two_pass_moments.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "variants/moments/launch.hpp"

namespace distancies {

namespace {

constexpr int kMergeThreads = 256;  // 8 columns (warps) per merge block
constexpr int kUnrollF32 = 8;       // loads in flight per thread (2 blocks of 1024 per SM: 64 KiB per SM)
constexpr int kUnrollF64 = 4;

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// Hands out 256-byte aligned pieces of one scratch buffer.
class Carver {
 public:
  template <class T>
  T* take(long long count) {
    const std::size_t at = used_;
    used_ += (static_cast<std::size_t>(count) * sizeof(T) + 255) / 256 * 256;
    return reinterpret_cast<T*>(base_ ? base_ + at : nullptr);
  }
  std::size_t used() const { return used_; }
  void set_base(void* p) {
    base_ = static_cast<unsigned char*>(p);
    used_ = 0;
  }

 private:
  unsigned char* base_ = nullptr;
  std::size_t used_ = 0;
};

template <class T>
MomentPartials<T> carve_partials(Carver& c, long long cols, int groups) {
  MomentPartials<T> p;
  p.n = c.take<long long>(cols * groups);
  p.mean = c.take<T>(cols * groups);
  p.m2 = c.take<T>(cols * groups);
  p.m3 = c.take<T>(cols * groups);
  p.m4 = c.take<T>(cols * groups);
  p.groups = groups;
  return p;
}

template <class T>
TwoPassScratch<T> carve_two_pass(Carver& c, long long cols, int groups) {
  TwoPassScratch<T> w;
  w.sum = c.take<T>(4 * cols * groups);
  w.lo = c.take<float>(cols * groups);
  w.hi = c.take<float>(cols * groups);
  w.mean = c.take<T>(cols);
  w.constant = c.take<int>(cols);
  w.groups = groups;
  w.cols = cols;
  return w;
}

// Carves twice: once to size the buffer, once on it.
template <class Layout>
Layout carve(MomentsScratch& s, Layout (*f)(Carver&, long long, int), long long cols, int groups) {
  Carver c;
  f(c, cols, groups);
  c.set_base(s.get(c.used()));
  return f(c, cols, groups);
}

void check_input(const MomentsInput& in, MatrixLayout layout) {
  if (in.rows < 1 || in.cols < 1) throw Error("moments: the matrix needs at least one row and one column");
  if (in.ld < (layout == MatrixLayout::RowMajor ? in.cols : in.rows))
    throw Error("moments: leading dimension smaller than the " +
                std::string(layout == MatrixLayout::RowMajor ? "column" : "row") + " count");
}

dim3 merge_grid(int cols) { return dim3(static_cast<unsigned>(ceil_div(cols, kMergeThreads / 32))); }

template <class T, bool kColMajor, bool kShuffle>
void one_pass(const MomentsInput& in, const MomentsOutput& out, MomentsScratch& s, cudaStream_t st) {
  const MatrixLayout layout = kColMajor ? MatrixLayout::ColumnMajor : MatrixLayout::RowMajor;
  check_input(in, layout);
  const MomentsGeometry g = moments_geometry(in.rows, in.cols, layout);
  const MomentPartials<T> p = carve<MomentPartials<T>>(s, carve_partials<T>, in.cols, g.groups);
  constexpr int kUnroll = sizeof(T) == 4 ? kUnrollF32 : kUnrollF64;
  one_pass_partials_kernel<T, kColMajor, kShuffle, kUnroll>
      <<<dim3(g.tiles, g.groups), g.threads, 0, st>>>(in, ColumnMap{g.width, g.slots}, p);
  CUDA_CHECK_LAUNCH();
  merge_partials_kernel<T, kColMajor><<<merge_grid(in.cols), kMergeThreads, 0, st>>>(p, in, out);
  CUDA_CHECK_LAUNCH();
}

template <class T, bool kCorrect>
void two_pass(const MomentsInput& in, const MomentsOutput& out, MomentsScratch& s, cudaStream_t st) {
  check_input(in, MatrixLayout::RowMajor);
  const MomentsGeometry g = moments_geometry(in.rows, in.cols, MatrixLayout::RowMajor);
  const TwoPassScratch<T> w = carve<TwoPassScratch<T>>(s, carve_two_pass<T>, in.cols, g.groups);
  const ColumnMap map{g.width, g.slots};
  const dim3 grid(g.tiles, g.groups);
  constexpr int kUnroll = sizeof(T) == 4 ? kUnrollF32 : kUnrollF64;
  const std::size_t shared1 = g.threads * std::max(sizeof(T), 2 * sizeof(float));
  column_sum_partials_kernel<T, false, kUnroll><<<grid, g.threads, shared1, st>>>(in, map, w);
  CUDA_CHECK_LAUNCH();
  column_mean_kernel<T><<<merge_grid(in.cols), kMergeThreads, 0, st>>>(w, in.rows);
  CUDA_CHECK_LAUNCH();
  column_central_partials_kernel<T, false, kUnroll><<<grid, g.threads, 4 * sizeof(T) * g.threads, st>>>(in, map, w);
  CUDA_CHECK_LAUNCH();
  column_central_merge_kernel<T, kCorrect>
      <<<merge_grid(in.cols), kMergeThreads, 0, st>>>(w, in.rows, in.estimator, out);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

MomentsGeometry moments_geometry(long long rows, int cols, MatrixLayout layout) {
  MomentsGeometry g;
  if (layout == MatrixLayout::ColumnMajor) {
    g.width = 1;
    g.slots = static_cast<int>(std::min<long long>(kMomentsMaxThreads, ceil_div(rows, 32) * 32));
    g.threads = g.slots;
    g.tiles = cols;
  } else {
    // Tiles of at most 1024 columns, as even as possible; as many row slots as fit.
    g.tiles = static_cast<int>(ceil_div(cols, kMomentsMaxThreads));
    g.width = static_cast<int>(ceil_div(cols, g.tiles));
    g.slots = static_cast<int>(std::min<long long>(kMomentsMaxThreads / g.width, rows));
    g.threads = static_cast<int>(ceil_div(static_cast<long long>(g.width) * g.slots, 32) * 32);
  }
  // Enough row groups to fill every SM once (a persistent grid), no more than there are rows.
  const cudaDeviceProp& p = device_status().props;
  const int resident = std::max(1, p.maxThreadsPerMultiProcessor / g.threads);
  const long long want = std::max<long long>(1, static_cast<long long>(p.multiProcessorCount) * resident / g.tiles);
  g.groups = static_cast<int>(std::min({want, ceil_div(rows, g.slots), 65535LL}));
  return g;
}

void launch_two_pass_corrected(const MomentsInput& in, const MomentsOutput& out, MomentsScratch& s, cudaStream_t st) {
  two_pass<float, true>(in, out, s, st);
}
void launch_two_pass_uncorrected(const MomentsInput& in, const MomentsOutput& out, MomentsScratch& s, cudaStream_t st) {
  two_pass<float, false>(in, out, s, st);
}
void launch_two_pass_f64(const MomentsInput& in, const MomentsOutput& out, MomentsScratch& s, cudaStream_t st) {
  two_pass<double, true>(in, out, s, st);
}
void launch_one_pass(const MomentsInput& in, const MomentsOutput& out, MomentsScratch& s, cudaStream_t st) {
  one_pass<float, false, true>(in, out, s, st);
}
void launch_one_pass_shared_merge(const MomentsInput& in, const MomentsOutput& out, MomentsScratch& s,
                                  cudaStream_t st) {
  one_pass<float, false, false>(in, out, s, st);
}
void launch_one_pass_f64(const MomentsInput& in, const MomentsOutput& out, MomentsScratch& s, cudaStream_t st) {
  one_pass<double, false, true>(in, out, s, st);
}
void launch_one_pass_colmajor(const MomentsInput& in, const MomentsOutput& out, MomentsScratch& s, cudaStream_t st) {
  one_pass<float, true, true>(in, out, s, st);
}

}  // namespace distancies
