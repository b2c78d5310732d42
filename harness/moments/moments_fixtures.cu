// The moments study's fixtures (docs/moments.md): moments/<variant>/rows:R/cols:C and
// moments/floor/rows:R/cols:C over the study's grid, columns 1 .. 4096, rows log-spaced from
// 2^10 to 2^28 elements (1 GiB). One matrix per shape, made on the device from the shared
// generator; its fp64 oracle is computed once per shape (untimed) for the error counters.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "harness/moments/gpu_moments.hpp"
#include "runtime/cuda_check.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies::bench {
namespace {

const int kMomentsCols[] = {1, 2, 8, 31, 32, 33, 300, 1024, 4096};
const int kMomentsLog2Elements[] = {10, 14, 18, 22, 26, 28};
constexpr std::uint64_t kMomentsSeed = 1;
constexpr double kMomentsMinTime = 0.05;  // seconds of device time per fixture: the family stays ~2 minutes

// The matrix of the current shape in both layouts, its oracle and its read floor; fixtures
// run in registration order, grouped by shape, so one shape is kept at a time.
struct Shape {
  long long rows = 0;
  int cols = 0;
  DeviceBuffer row_major, col_major;
  ColumnMoments oracle;
  double floor_ms = 0;  // least_read_ms of the matrix (fixture_util.hpp): a true floor
  double bytes() const { return double(rows) * cols * sizeof(float); }
};

Shape& shape(long long rows, int cols, bool need_col_major) {
  // Never destroyed: freeing device memory during static destruction, after the runtime has
  // shut down, would fail.
  static Shape* s = nullptr;
  if (!s || s->rows != rows || s->cols != cols) {
    delete s;  // free the previous shape's device memory first
    s = nullptr;
    auto made = std::make_unique<Shape>();  // kept only when complete (a throw leaves none)
    made->rows = rows;
    made->cols = cols;
    const std::size_t n = static_cast<std::size_t>(rows) * cols;
    made->row_major = DeviceBuffer(n * sizeof(float), "moments matrix");
    fill_moments_matrix(made->row_major.as<float>(), kMomentsSeed, rows, cols, false, nullptr);
    std::vector<float> host(n);
    CUDA_CHECK(cudaMemcpy(host.data(), made->row_major.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
    made->oracle = moments_oracle({host.data(), rows, cols, cols, false}, MomentEstimator{});
    made->floor_ms = least_read_ms(double(n) * sizeof(float));
    s = made.release();
  }
  if (need_col_major && !s->col_major.get()) {
    s->col_major = DeviceBuffer(static_cast<std::size_t>(rows) * cols * sizeof(float), "moments matrix (column-major)");
    fill_moments_matrix(s->col_major.as<float>(), kMomentsSeed, rows, cols, true, nullptr);
  }
  return *s;
}

void shape_counters(benchmark::State& st, const Shape& s, double ms) {
  st.counters["rows"] = double(s.rows);
  st.counters["cols"] = s.cols;
  st.counters["elements"] = double(s.rows) * s.cols;
  st.counters["bytes"] = s.bytes();
  st.counters["elements_per_ms"] = double(s.rows) * s.cols / ms;
  st.counters["floor_ms"] = s.floor_ms;
  st.counters["floor_ratio"] = ms / s.floor_ms;
}

void floor_fixture(benchmark::State& st, long long rows, int cols) {
  const Shape& s = shape(rows, cols, false);
  DeviceBuffer sink(static_cast<std::size_t>(floor_sink_len()) * sizeof(float), "floor sink");
  const double ms = exec_kernel(
      st,
      [&](cudaStream_t stream) {
        launch_best_read(s.row_major.get(), static_cast<std::size_t>(s.bytes()), sink.as<float>(), stream);
      },
      s.bytes());
  if (ms > 0) shape_counters(st, s, ms);
}

void variant_fixture(benchmark::State& st, const MomentsVariant* v, long long rows, int cols) {
  const bool col_major = v->layout == MatrixLayout::ColumnMajor;
  const Shape& s = shape(rows, cols, col_major);
  const MomentsInput in{(col_major ? s.col_major : s.row_major).as<float>(), rows, cols, col_major ? rows : cols,
                        MomentEstimator{}};
  MomentsOutputBuffers out(cols);
  MomentsScratch scratch;
  // The error against the oracle, once and untimed.
  v->launch(in, out.view(), scratch, nullptr);
  const MomentErrors e = moment_errors(out.download(), s.oracle);
  const double ms = exec_kernel(
      st, [&](cudaStream_t stream) { v->launch(in, out.view(), scratch, stream); }, s.bytes());
  if (ms == 0) return;
  shape_counters(st, s, ms);
  st.counters["rel_error_mean"] = e.mean;
  st.counters["rel_error_variance"] = e.variance;
  st.counters["rel_error_skewness"] = e.skewness;
  st.counters["rel_error_kurtosis"] = e.kurtosis;
  st.counters["passes"] = v->passes;
}

}  // namespace

// The study's registrar (cmake/studies.cmake): every fixture needs the GPU.
void register_moments_fixtures(bool gpu) {
  if (!gpu) return;
  for (int cols : kMomentsCols)
    for (int lg : kMomentsLog2Elements) {
      const long long rows = std::max(1LL, ((1LL << lg) + cols - 1) / cols);
      const auto name = [&](const char* row) {
        return FixtureName("moments", row).axis("rows", rows).axis("cols", cols);
      };
      min_time(timed(add(name("floor"), floor_fixture, rows, cols)), kMomentsMinTime);
      for (const MomentsVariant& v : moments_variants())
        min_time(timed(add(name(v.name), variant_fixture, &v, rows, cols)), kMomentsMinTime);
    }
}

}  // namespace distancies::bench
