// What every fixture family shares: warm-ups, per-iteration means as counters, and
// registration that turns a thrown error into a skipped fixture.
#pragma once
#include <benchmark/benchmark.h>

#include <exception>
#include <map>
#include <string>

namespace distancies::bench {

constexpr int kWarmups = 3;

// Sums per-iteration values; publishes their means as counters.
class Means {
 public:
  void add(const std::string& name, double v) { sums_[name] += v; }
  double mean(const benchmark::State& st, const std::string& name) const {
    const auto it = sums_.find(name);
    return it == sums_.end() || st.iterations() == 0 ? 0.0 : it->second / double(st.iterations());
  }
  void publish(benchmark::State& st) const {
    const double n = st.iterations() > 0 ? double(st.iterations()) : 1.0;
    for (const auto& [name, sum] : sums_) st.counters[name] = sum / n;
  }

 private:
  std::map<std::string, double> sums_;
};

// A fixture that throws (a GPU error, out of memory) reports it and lets the others run.
template <class Fn, class... Args>
void guarded(benchmark::State& st, Fn fn, Args... args) {
  try {
    fn(st, args...);
  } catch (const std::exception& e) {
    st.SkipWithError(e.what());  // an error counts as finished; Google Benchmark moves on
  }
}

template <class Fn, class... Args>
benchmark::internal::Benchmark* add(const std::string& name, Fn fn, Args... args) {
  return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { guarded(st, fn, args...); });
}

inline benchmark::internal::Benchmark* timed(benchmark::internal::Benchmark* b) {
  return b->UseManualTime()->Unit(benchmark::kMillisecond);
}


}  // namespace distancies::bench
