// The measurement engine on a GPU: one sample, the cold mode's flush buffer, telemetry or the
// reason there is none, and the Google Benchmark adapter end to end (counters, the refusal of a
// figure faster than its bytes allow, skips, noise-based stopping, self-timed work).
#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/bench/measure.hpp"
#include "runtime/device.hpp"
#include "tests/bench/run_one.hpp"
#include "tests/gpu_skip.hpp"

namespace distancies::bench {
namespace {

constexpr std::size_t kBytes = 64u << 20;  // 64 MiB: more than any L2 today

class MeasureGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    DISTANCIES_REQUIRE_GPU();
    buf_ = DeviceBuffer(kBytes, "test buffer");
  }
  void TearDown() override { shutdown_measure(); }
  void init(CacheMode mode, double target_rsd = 0, double inject_pct = 0) {
    MeasureConfig c;
    c.inject_slowdown_pct = inject_pct;
    c.mode = mode;
    c.stopping.target_rsd = target_rsd;
    c.stopping.min_samples = 5;
    c.stopping.min_time_s = 0;
    c.stopping.max_time_s = 10;
    init_measure(c);
  }
  DeviceWork memset_work() {
    return [this](cudaStream_t s) { CUDA_CHECK(cudaMemsetAsync(buf_.get(), 1, kBytes, s)); };
  }
  DeviceBuffer buf_;
};

TEST_F(MeasureGpu, OneColdSampleFlushesTwiceTheL2AndReadsTheGpu) {
  init(CacheMode::Cold);
  EXPECT_GE(l2_flush_bytes(), 2 * static_cast<std::size_t>(device_status().props.l2CacheSize));
  EXPECT_GT(peak_dram_bytes_per_s(), 1e9);
  const Sample s = sample_once(memset_work());
  EXPECT_GT(s.ms, 0.0);
  const std::string status = telemetry_status();
  if (status.rfind("on ", 0) == 0) {
    ASSERT_TRUE(s.gpu.has_value()) << status;
    EXPECT_GT(s.gpu->sm_clock_mhz, 0.0);
  } else {
    EXPECT_FALSE(s.gpu.has_value());
    EXPECT_FALSE(status.empty());
    std::printf("no telemetry here: %s\n", status.c_str());
  }
}

TEST_F(MeasureGpu, WarmModeHasNoFlushBuffer) {
  init(CacheMode::Warm);
  EXPECT_EQ(l2_flush_bytes(), 0u);
  EXPECT_GT(sample_once(memset_work()).ms, 0.0);
}

TEST_F(MeasureGpu, ExecPublishesSamplesModeAndTelemetry) {
  init(CacheMode::Cold);
  int seen = 0;
  const auto r = run_one(
      "measure_test/exec",
      [&](benchmark::State& st) {
        ExecOptions o;
        o.min_bytes = kBytes / 4;  // a bound it meets whatever part of the writes the L2 absorbs
        o.on_sample = [&](double ms) { seen += ms > 0; };
        exec(st, memset_work(), o);
      },
      20);
  ASSERT_FALSE(failed(r, 0)) << message(r, 0);
  EXPECT_EQ(seen, 20);
  EXPECT_EQ(r.counters.at("samples").value, 20);
  EXPECT_EQ(r.counters.at("cold").value, 1);
  EXPECT_GE(r.counters.at("rsd_pct").value, 0);
  EXPECT_GT(r.GetAdjustedRealTime(), 0);
  if (telemetry_status().rfind("on ", 0) == 0) {
    EXPECT_GT(r.counters.at("sm_clock_mhz").value, 0);
    const double throttled = r.counters.at("throttled_samples").value;
    EXPECT_GE(throttled, 0);
    EXPECT_LE(throttled, 20);
  } else {
    EXPECT_EQ(r.counters.count("sm_clock_mhz"), 0u);
  }
}

TEST_F(MeasureGpu, RefusesAFigureFasterThanItsBytes) {
  init(CacheMode::Cold);
  const auto r = run_one(
      "measure_test/too_fast",
      [&](benchmark::State& st) {
        ExecOptions o;
        o.min_bytes = 1e12;  // a terabyte "read" by no work at all
        exec(
            st, [](cudaStream_t) {}, o);
      },
      5);
  EXPECT_TRUE(failed(r, 0));
  EXPECT_NE(message(r, 0).find("refused"), std::string::npos) << message(r, 0);
}

TEST_F(MeasureGpu, SkipGivesTheReason) {
  init(CacheMode::Warm);
  const auto r = run_one(
      "measure_test/skip", [](benchmark::State& st) { skip(st, "k = 1024 is beyond this stage"); }, 1);
  EXPECT_TRUE(failed(r, 0));
  EXPECT_NE(message(r, 0).find("k = 1024 is beyond this stage"), std::string::npos) << message(r, 0);
}

TEST_F(MeasureGpu, NoiseStoppingHoldsItsSamplesInOneIteration) {
  init(CacheMode::Warm, 0.5);  // 50 %: converges as soon as the minimum of 5 samples is there
  const auto r = run_one(
      "measure_test/stopping", [&](benchmark::State& st) { exec(st, memset_work()); }, 1);
  ASSERT_FALSE(failed(r, 0)) << message(r, 0);
  EXPECT_EQ(r.iterations, 1);
  EXPECT_GE(r.counters.at("samples").value, 5);
  EXPECT_EQ(r.counters.at("converged").value, 1);
}

TEST_F(MeasureGpu, SelfTimedWorkReportsItsOwnTime) {
  init(CacheMode::Cold);
  const auto r = run_one(
      "measure_test/self_timed",
      [&](benchmark::State& st) {
        exec_timed(st, [&](cudaStream_t s) {
          memset_work()(s);
          CUDA_CHECK(cudaStreamSynchronize(s));
          return 2.5;
        });
      },
      4);
  ASSERT_FALSE(failed(r, 0)) << message(r, 0);
  EXPECT_NEAR(r.GetAdjustedRealTime(), 2.5e6, 1.0);  // ns: manual time, 2.5 ms a sample
  EXPECT_EQ(r.counters.at("samples").value, 4);
}

// --inject-slowdown on device work and on self-timed work: the work runs a quarter more often
// (its preparation with it), and every sample carries the charge.
TEST_F(MeasureGpu, InjectedSlowdownReplaysDeviceAndSelfTimedWork) {
  init(CacheMode::Cold, 0, 25);
  int runs = 0, prepared = 0;
  auto counted = [&](cudaStream_t s) {
    ++runs;
    memset_work()(s);
  };
  const auto r = run_one(
      "measure_test/inject_device",
      [&](benchmark::State& st) {
        ExecOptions o;
        o.prepare = [&](cudaStream_t) { ++prepared; };
        exec(st, counted, o);
      },
      40);
  ASSERT_FALSE(failed(r, 0)) << message(r, 0);
  EXPECT_EQ(runs, 3 + 40 + 10);  // warm-ups, samples, replays
  EXPECT_EQ(prepared, runs);
  EXPECT_GT(r.counters.at("injected_ms").value, 0.0);

  runs = 0;
  const auto t = run_one(
      "measure_test/inject_timed",
      [&](benchmark::State& st) {
        exec_timed(st, [&](cudaStream_t s) {
          counted(s);
          CUDA_CHECK(cudaStreamSynchronize(s));
          return 2.0;
        });
      },
      40);
  ASSERT_FALSE(failed(t, 0)) << message(t, 0);
  EXPECT_EQ(runs, 3 + 40 + 10);
  EXPECT_DOUBLE_EQ(t.counters.at("injected_ms").value, 0.5);  // a quarter of the replays' 2 ms
  EXPECT_NEAR(t.GetAdjustedRealTime(), 2.5e6, 1.0);
}

}  // namespace
}  // namespace distancies::bench
