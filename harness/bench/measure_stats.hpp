// The measurement engine's arithmetic, host only (unit-tested on the CPU): running statistics
// of the samples, the noise-based stopping decision, and the too-fast refusal.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

namespace distancies::bench {

// Running mean, standard deviation (n - 1) and minimum (Welford's update: no cancellation).
class RunningStats {
 public:
  void add(double x);
  std::size_t count() const { return n_; }
  double mean() const { return mean_; }
  double sum() const { return mean_ * double(n_); }
  double min() const { return min_; }
  double stddev() const;  // 0 with fewer than 2 samples
  double rsd() const;     // stddev / mean (0 with fewer than 2 samples or a mean of 0)

 private:
  std::size_t n_ = 0;
  double mean_ = 0, m2_ = 0, min_ = 0;
};

// Noise-based stopping (docs/methodology.md): sample until the relative standard deviation of the
// samples is at most target_rsd, after at least min_samples samples and min_time_s of measured
// (device) time; give up at max_time_s of wall time. target_rsd 0: off.
struct StoppingRule {
  double target_rsd = 0;    // a fraction: 0.005 = 0.5 %
  double min_time_s = 0.5;  // summed sample times
  double max_time_s = 5.0;  // wall clock, warm-ups, flushes and telemetry included
  int min_samples = 10;
  bool enabled() const { return target_rsd > 0; }
};

enum class StopDecision { Continue, Converged, TimedOut };

// stats: the samples so far (ms); wall_s: wall time since the first sample began.
StopDecision stop_decision(const StoppingRule& rule, const RunningStats& stats, double wall_s);

// Peak DRAM bandwidth from the device's memory clock (kHz) and bus width (bits): the clock
// times the bus width in bytes, times 2 for double data rate. Bytes per second.
double peak_dram_bytes_per_s(double memory_clock_khz, int bus_width_bits);

// The least time (ms) in which `bytes` can be moved at `peak_bytes_per_s`, once `cached_bytes`
// (what the L2 may already hold: its size in warm mode, 0 in cold mode) are allowed for.
double least_time_ms(double bytes, double peak_bytes_per_s, double cached_bytes);

// Why a measurement is refused: its fastest sample beats least_time_ms (bytes: what it must read). nullopt: accepted
// (also when bytes or the peak are unknown, <= 0).
std::optional<std::string> too_fast(double fastest_ms, double bytes, double peak_bytes_per_s, double cached_bytes);

}  // namespace distancies::bench
