#include "harness/bench/measure_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace distancies::bench {

void RunningStats::add(double x) {
  ++n_;
  min_ = n_ == 1 ? x : std::min(min_, x);
  const double d = x - mean_;
  mean_ += d / double(n_);
  m2_ += d * (x - mean_);
}

double RunningStats::stddev() const { return n_ < 2 ? 0.0 : std::sqrt(std::max(0.0, m2_ / double(n_ - 1))); }

double RunningStats::rsd() const { return n_ < 2 || mean_ == 0 ? 0.0 : stddev() / std::fabs(mean_); }

StopDecision stop_decision(const StoppingRule& rule, const RunningStats& stats, double wall_s) {
  const bool enough =
      stats.count() >= static_cast<std::size_t>(std::max(rule.min_samples, 2)) && stats.sum() / 1e3 >= rule.min_time_s;
  if (enough && stats.rsd() <= rule.target_rsd) return StopDecision::Converged;
  if (wall_s >= rule.max_time_s && stats.count() > 0) return StopDecision::TimedOut;
  return StopDecision::Continue;
}

double peak_dram_bytes_per_s(double memory_clock_khz, int bus_width_bits) {
  return memory_clock_khz * 1e3 * (bus_width_bits / 8.0) * 2.0;
}

double least_time_ms(double bytes, double peak_bytes_per_s, double cached_bytes) {
  if (bytes <= 0 || peak_bytes_per_s <= 0) return 0;
  return std::max(0.0, bytes - std::max(0.0, cached_bytes)) / peak_bytes_per_s * 1e3;
}

std::optional<std::string> too_fast(double fastest_ms, double bytes, double peak_bytes_per_s, double cached_bytes) {
  const double least = least_time_ms(bytes, peak_bytes_per_s, cached_bytes);
  if (least <= 0 || fastest_ms >= least) return std::nullopt;
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "refused: a sample of %.6g ms is faster than reading the %.4g bytes this work must read at the "
                "card's peak DRAM bandwidth (%.1f GB/s: %.6g ms, %.4g bytes allowed for the L2): "
                "the work cannot have been done",
                fastest_ms, bytes, peak_bytes_per_s / 1e9, least, std::max(0.0, cached_bytes));
  return std::string(buf);
}

}  // namespace distancies::bench
