// The measurement engine's arithmetic, on the CPU: running statistics, the noise-based stopping
// decision, throttle classification and the too-fast refusal.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "harness/bench/measure.hpp"
#include "harness/bench/measure_stats.hpp"
#include "runtime/error.hpp"
#include "runtime/telemetry.hpp"

namespace distancies::bench {
namespace {

RunningStats of(std::initializer_list<double> xs) {
  RunningStats s;
  for (double x : xs) s.add(x);
  return s;
}

TEST(MeasureStats, MatchesTheTwoPassFormulas) {
  const RunningStats s = of({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_EQ(s.count(), 8u);
  EXPECT_DOUBLE_EQ(s.mean(), 5.0);
  EXPECT_DOUBLE_EQ(s.sum(), 40.0);
  EXPECT_DOUBLE_EQ(s.min(), 2.0);
  EXPECT_NEAR(s.stddev(), std::sqrt(32.0 / 7.0), 1e-12);  // n - 1 in the denominator
  EXPECT_NEAR(s.rsd(), std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
}

TEST(MeasureStats, FewerThanTwoSamplesHaveNoSpread) {
  EXPECT_EQ(of({}).rsd(), 0.0);
  EXPECT_EQ(of({3}).stddev(), 0.0);
  EXPECT_EQ(of({3}).min(), 3.0);
}

TEST(MeasureStats, NoCancellationAtLargeOffsets) {
  // 1e9 + {1, 2, 3}: a naive sum of squares loses these digits.
  const RunningStats s = of({1e9 + 1, 1e9 + 2, 1e9 + 3});
  EXPECT_NEAR(s.stddev(), 1.0, 1e-6);
}

StoppingRule rule(double target, int min_samples, double min_time_s, double max_time_s) {
  StoppingRule r;
  r.target_rsd = target;
  r.min_samples = min_samples;
  r.min_time_s = min_time_s;
  r.max_time_s = max_time_s;
  return r;
}

TEST(MeasureStopping, ConvergesOnlyWithEnoughSamplesTimeAndLowNoise) {
  const StoppingRule r = rule(0.01, 4, 0.002, 10);  // 1 %, 4 samples, 2 ms measured
  // Quiet samples of 1 ms: three are too few, four are enough.
  EXPECT_EQ(stop_decision(r, of({1, 1, 1}), 0.1), StopDecision::Continue);
  EXPECT_EQ(stop_decision(r, of({1, 1, 1, 1}), 0.1), StopDecision::Converged);
  // Enough samples but too little measured time (4 x 0.1 ms < 2 ms).
  EXPECT_EQ(stop_decision(r, of({0.1, 0.1, 0.1, 0.1}), 0.1), StopDecision::Continue);
  // Noisy: rsd of {1, 2, 1, 2} is 0.38 > 1 %.
  EXPECT_EQ(stop_decision(r, of({1, 2, 1, 2}), 0.1), StopDecision::Continue);
  // At exactly the target it stops: rsd <= target.
  const RunningStats two = of({0.99, 1.01, 0.99, 1.01});
  EXPECT_EQ(stop_decision(rule(two.rsd(), 4, 0, 10), two, 0.1), StopDecision::Converged);
}

TEST(MeasureStopping, TimesOutOnWallTimeOnly) {
  const StoppingRule r = rule(0.01, 4, 0.0, 1.0);
  EXPECT_EQ(stop_decision(r, of({1, 2, 1, 2}), 0.999), StopDecision::Continue);
  EXPECT_EQ(stop_decision(r, of({1, 2, 1, 2}), 1.0), StopDecision::TimedOut);
  // Past the wall limit before the minimum count: stops all the same.
  EXPECT_EQ(stop_decision(r, of({1}), 2.0), StopDecision::TimedOut);
  // ... but never with no sample at all.
  EXPECT_EQ(stop_decision(r, of({}), 2.0), StopDecision::Continue);
  // Converged wins over timed out when both hold.
  EXPECT_EQ(stop_decision(r, of({1, 1, 1, 1}), 5.0), StopDecision::Converged);
}

TEST(MeasureStopping, NeedsTwoSamplesEvenWhenTheMinimumSaysOne) {
  // One sample has rsd 0: it must not count as converged.
  EXPECT_EQ(stop_decision(rule(0.01, 1, 0, 10), of({1}), 0.1), StopDecision::Continue);
  EXPECT_EQ(stop_decision(rule(0.01, 1, 0, 10), of({1, 1}), 0.1), StopDecision::Converged);
}

TEST(MeasureThrottle, ClockUnderNinetyPercentOfMaximum) {
  GpuSample s;
  s.sm_clock_mhz = 1980;
  EXPECT_FALSE(is_throttled(s, 1980));
  s.sm_clock_mhz = 0.9 * 1980;  // exactly 90 %: not under it
  EXPECT_FALSE(is_throttled(s, 1980));
  s.sm_clock_mhz = 0.9 * 1980 - 1;
  EXPECT_TRUE(is_throttled(s, 1980));
  EXPECT_FALSE(is_throttled(s, 0));  // maximum unknown: the clock alone decides nothing
}

TEST(MeasureThrottle, PowerAndThermalReasonsCountIdleAndOthersDoNot) {
  GpuSample s;
  s.sm_clock_mhz = 1980;
  for (std::uint64_t r : {clock_reason::kSwPowerCap, clock_reason::kHwSlowdown, clock_reason::kSwThermalSlowdown,
                          clock_reason::kHwThermalSlowdown, clock_reason::kHwPowerBrakeSlowdown}) {
    s.clock_event_reasons = r;
    EXPECT_TRUE(is_throttled(s, 1980)) << "reason bit 0x" << std::hex << r;
  }
  for (std::uint64_t r : {clock_reason::kGpuIdle, std::uint64_t{0x2} /* applications clocks */,
                          std::uint64_t{0x10} /* sync boost */, std::uint64_t{0x100} /* display */}) {
    s.clock_event_reasons = r;
    EXPECT_FALSE(is_throttled(s, 1980)) << "reason bit 0x" << std::hex << r;
  }
}

TEST(MeasureRefusal, PeakBandwidthFromClockAndBus) {
  // H100 SXM: 2,619 MHz memory clock, 5,120-bit bus, double data rate: 3.352 TB/s.
  EXPECT_DOUBLE_EQ(peak_dram_bytes_per_s(2619000, 5120), 2619e6 * 640 * 2);
}

TEST(MeasureRefusal, LeastTimeAllowsForTheL2) {
  const double peak = 2e12;  // 2 TB/s: 1 GB in 0.5 ms
  EXPECT_DOUBLE_EQ(least_time_ms(1e9, peak, 0), 0.5);
  EXPECT_DOUBLE_EQ(least_time_ms(1e9, peak, 50e6), 0.475);  // warm: 50 MB may come from the L2
  EXPECT_DOUBLE_EQ(least_time_ms(40e6, peak, 50e6), 0.0);   // all of it may be cached
  EXPECT_DOUBLE_EQ(least_time_ms(0, peak, 0), 0.0);
  EXPECT_DOUBLE_EQ(least_time_ms(1e9, 0, 0), 0.0);  // peak unknown: no bound
}

TEST(MeasureRefusal, RefusesOnlyFiguresFasterThanTheBound) {
  const double peak = 2e12;
  // The committed topk/reduced_scan_topk/k:1024 case: 0.002 ms for a scan that must read the
  // 16-bit copy of a 2,196,016 x 300 model (1.32 GB): refused, even allowing 50 MB of L2.
  const double half_model = 2196016.0 * 300 * 2;
  const auto why = too_fast(0.002, half_model, peak, 50e6);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("refused"), std::string::npos);
  EXPECT_NE(why->find("0.002 ms"), std::string::npos) << *why;
  // At or above the bound: accepted.
  const double least = least_time_ms(half_model, peak, 0);
  EXPECT_FALSE(too_fast(least, half_model, peak, 0).has_value());
  EXPECT_FALSE(too_fast(least * 1.1, half_model, peak, 0).has_value());
  EXPECT_TRUE(too_fast(least * 0.99, half_model, peak, 0).has_value());
  // No bytes given: never refused.
  EXPECT_FALSE(too_fast(1e-9, 0, peak, 0).has_value());
}

// Here (no driver) or on a GPU host: either readings, or none and the reason.
TEST(MeasureTelemetry, ReadingsOrAReason) {
  const Telemetry t("0000:00:00.0");
  if (t.available()) {
    ASSERT_TRUE(t.sample().has_value());
    EXPECT_GT(t.sample()->sm_clock_mhz, 0.0);
  } else {
    EXPECT_FALSE(t.reason().empty());
    EXPECT_FALSE(t.sample().has_value());
    std::printf("no NVML readings: %s\n", t.reason().c_str());
  }
}

}  // namespace
}  // namespace distancies::bench

// Device timing before init_measure (this binary never calls it) is one clear error, not a null
// event: the bench tests once built their state, whose floors are timed, without it.
TEST(MeasureEngine, DeviceTimingBeforeInitIsAnError) {
  EXPECT_THROW(distancies::bench::reference_ms([](cudaStream_t) {}, 1, 0, distancies::bench::Pick::Median),
               distancies::Error);
}
