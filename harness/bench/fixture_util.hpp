// What every fixture family shares: per-sample means as counters, a median of values, the
// fixture's parameters as counters, and registration that turns a thrown error into a failed fixture. Timing is the
// measurement engine's (measure.hpp).
#pragma once
#include <benchmark/benchmark.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/bench/measure.hpp"

namespace distancies::bench {

// The median of `v` (the upper one of an even count), 0 for none.
inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Per-sample values; publishes each one's mean over the samples it was added for.
class Means {
 public:
  void add(const std::string& name, double v) {
    auto& [sum, n] = sums_[name];
    sum += v;
    ++n;
  }
  double mean(const std::string& name) const {
    const auto it = sums_.find(name);
    return it == sums_.end() || it->second.second == 0 ? 0.0 : it->second.first / double(it->second.second);
  }
  void publish(benchmark::State& st) const {
    for (const auto& [name, s] : sums_) st.counters[name] = s.first / double(s.second);
  }

 private:
  std::map<std::string, std::pair<double, long long>> sums_;
};

// The fixture's parameters (rows, dim, k, batch, ...) as counters: scripts read them there
// instead of parsing names.
inline void parameters(benchmark::State& st, std::initializer_list<std::pair<const char*, double>> p) {
  for (const auto& [name, v] : p) st.counters[name] = v;
}

// A fixture that throws (a GPU error, out of memory) reports it and lets the others run.
template <class Fn, class... Args>
void guarded(benchmark::State& st, Fn fn, Args... args) {
  try {
    fn(st, args...);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());  // an error counts as finished; Google Benchmark moves on
  }
}

// Device work that must read `bytes` at least, timed by the engine: counters kernel_ms (the
// mean sample) and gb_per_s (the bytes over that mean). Returns the mean ms, 0 when the engine
// refused the figure (the fixture is then an error).
inline double exec_kernel(benchmark::State& st, const DeviceWork& work, double bytes) {
  Means m;
  ExecOptions o;
  o.min_bytes = bytes;
  o.on_sample = [&](double ms) { m.add("kernel_ms", ms); };
  if (!exec(st, work, o)) return 0;
  m.publish(st);
  const double ms = m.mean("kernel_ms");
  if (ms > 0) st.counters["gb_per_s"] = bytes / (ms * 1e6);
  return ms;
}

// The best read the card achieves at `bytes` (floor/read_model's kernel, fixtures.cu): the
// studies' floors. data: 16-byte aligned; a tail under 16 bytes is not read (still a lower bound).
void launch_best_read(const void* data, std::size_t bytes, float* sink, cudaStream_t s);
// The fastest of `reps` such reads on the engine's stream, back to back (warm: what the L2 holds
// of `data` is read from it, as it is for the work compared with it). ms.
double best_read_ms(const void* data, std::size_t bytes, int reps);
// The floor of reading `bytes` distinct bytes (docs/methodology.md, "Floors"): the least time the
// refusal allows, with the DRAM part at the best read this card achieves (the fastest of 20
// reads of a 1 GiB buffer, measured once a process) instead of its nominal peak; in warm mode up
// to the L2's size of them at the L2 ceiling. No fixture that reads them can beat it, whatever its
// size, so a figure under it is a bug. ms.
double least_read_ms(double bytes);
// The best read rate that floor uses (bytes per second).
double best_read_bytes_per_s();

// Every fixture name this process registered, in order (what the registry gave the bench).
inline std::vector<std::string>& registered_fixtures() {
  static std::vector<std::string> names;
  return names;
}

// Which fixtures this run hands to Google Benchmark (suites.hpp: --suite, less --resume's
// finished ones); unset: all. An unselected fixture gets an object Google Benchmark never sees,
// so the chained settings after add() still apply to something.
std::function<bool(const std::string&)>& fixture_selection();
benchmark::internal::Benchmark* unselected_fixture(const std::string& name);

// A fixture declared as nvbench declares a benchmark: its family and row, then its axes, each a
// name and a value, in order. The name is "family/row/axis:value/..." and every numeric axis is
// also the counter of that name (unless the fixture sets that counter itself), so a fixture states
// its parameters once (scripts read the counters, people the name).
class FixtureName {
 public:
  explicit FixtureName(std::string family) : name_(std::move(family)) {}
  FixtureName(std::string family, std::string_view row) : name_(std::move(family)) { this->row(row); }
  FixtureName& row(std::string_view part) {
    name_ += "/";
    name_ += part;
    return *this;
  }
  FixtureName& axis(const char* axis, long long value) {
    numeric_.emplace_back(axis, double(value));
    return label(axis, std::to_string(value));
  }
  FixtureName& axis(const char* axis, std::string_view value) { return label(axis, value); }
  const std::string& str() const { return name_; }
  const std::vector<std::pair<std::string, double>>& counters() const { return numeric_; }

 private:
  FixtureName& label(const char* axis, std::string_view value) {
    name_ += "/";
    name_ += axis;
    name_ += ":";
    name_ += value;
    return *this;
  }
  std::string name_;
  std::vector<std::pair<std::string, double>> numeric_;
};

template <class Fn, class... Args>
benchmark::internal::Benchmark* add(const FixtureName& fixture, Fn fn, Args... args) {
  const std::string& name = fixture.str();
  registered_fixtures().push_back(name);
  if (fixture_selection() && !fixture_selection()(name)) return unselected_fixture(name);
  return benchmark::RegisterBenchmark(name.c_str(), [=, axes = fixture.counters()](benchmark::State& st) {
    guarded(st, fn, args...);
    for (const auto& [axis, value] : axes) st.counters.emplace(axis, value);  // a fixture's own figure stays
  });
}

// Device-timed fixtures: manual time in ms. With noise-based stopping one Google Benchmark
// iteration holds all of a repetition's samples (measure.hpp); fixtures that keep a study's
// fixed count set Iterations(N) after this and pass ExecOptions::fixed_samples.
inline benchmark::internal::Benchmark* timed(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
  if (measure_config().stopping.enabled()) b->Iterations(1);
  return b;
}

// A family's minimum time per repetition, unless noise-based stopping decides the samples
// itself (then every fixture runs one Google Benchmark iteration, and Google Benchmark refuses
// a minimum time beside a fixed iteration count).
inline benchmark::internal::Benchmark* min_time(benchmark::internal::Benchmark* b, double seconds) {
  return measure_config().stopping.enabled() ? b : b->MinTime(seconds);
}

}  // namespace distancies::bench
