#include "harness/bench/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <utility>

#include "runtime/device.hpp"
#include "runtime/error.hpp"

namespace distancies::bench {

namespace {

struct Engine {
  MeasureConfig config;
  bool gpu = false;
  cudaStream_t stream{};
  std::unique_ptr<Event> start, stop;
  std::unique_ptr<Event> replay_start, replay_stop;  // --inject-slowdown: the replayed run
  double replay_credit = 0;                          // --inject-slowdown: replays owed (below)
  double replay_ms = 0;                              // --inject-slowdown: the last replay's time
  DeviceBuffer flush;                                // cold mode: >= 2x the L2, allocated once
  std::unique_ptr<Telemetry> telemetry;
  std::string telemetry_status = "off";
  std::optional<GpuSample> last_reading;
  std::chrono::steady_clock::time_point last_read;
  double peak = 0;  // bytes per second
  double l2_bytes = 0;
  double l2_peak = 0;  // bytes per second: an upper bound of what the SMs can take from the L2
};

Engine& engine() {
  static Engine e;
  return e;
}

// The engine with its stream and events: device timing before init_measure (or without a GPU) is
// an error, never a null event.
Engine& device_engine() {
  Engine& e = engine();
  if (!e.start) throw Error("device work timed before init_measure, or without a GPU");
  return e;
}

bool cold() { return engine().config.mode == CacheMode::Cold; }

double inject_fraction() { return engine().config.inject_slowdown_pct / 100.0; }

// --inject-slowdown: the work itself is run once more every 1 / fraction samples, outside the
// sample, and every sample is charged the fraction of the last such run's measured time. The card
// then does that much more work, so a power- or clock-bound kernel slows as a truly slower kernel
// would (an idle wait lets the clocks recover and understates the slowdown), and a short sample is
// not lengthened by a launch's overhead (a separate wait inside the sample overstates it).
// `replay` runs the work once and returns its time in ms; until the first replay a sample is
// charged the fraction of the fixture's first sample.
double injected_ms(double own_ms, const std::function<double()>& replay) {
  Engine& e = engine();
  if (e.replay_ms <= 0) e.replay_ms = own_ms;
  e.replay_credit += inject_fraction();
  if (e.replay_credit >= 1) {
    e.replay_credit -= 1;
    e.replay_ms = replay();
  }
  return inject_fraction() * e.replay_ms;
}

// Evicts the L2: writes a buffer twice its size on the stream, outside the timed region.
void flush_l2(cudaStream_t s) {
  Engine& e = engine();
  if (e.flush.bytes() > 0) CUDA_CHECK(cudaMemsetAsync(e.flush.get(), 0, e.flush.bytes(), s));
}

// NVML's readings change no faster than about a millisecond, and each query costs tens of
// microseconds of host time: a sample that follows the last reading by less than this shares it.
constexpr auto kTelemetryPeriod = std::chrono::microseconds(1000);

std::optional<GpuSample> read_gpu() {
  Engine& e = engine();
  if (!e.telemetry) return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  if (!e.last_reading || now - e.last_read >= kTelemetryPeriod) {
    e.last_reading = e.telemetry->sample();
    e.last_read = now;
  }
  return e.last_reading;
}

// Everything one fixture run's samples add up to, published as counters.
class Tally {
 public:
  void add(const Sample& s) {
    ms_.add(s.ms);
    injected_.add(s.injected_ms);
    if (!s.gpu) return;
    const GpuSample& g = *s.gpu;
    ++with_gpu_;
    sm_.add(g.sm_clock_mhz);
    if (!std::isnan(g.mem_clock_mhz)) mem_.add(g.mem_clock_mhz);
    if (!std::isnan(g.power_w)) power_.add(g.power_w);
    if (!std::isnan(g.temperature_c)) temp_.add(g.temperature_c);
    reasons_ |= g.clock_event_reasons & ~clock_reason::kGpuIdle;
    if (is_throttled(g, engine().telemetry->max_sm_clock_mhz())) ++throttled_;
  }
  const RunningStats& ms() const { return ms_; }

  void publish(benchmark::State& st) const {
    st.counters["samples"] = double(ms_.count());
    st.counters["rsd_pct"] = 100.0 * ms_.rsd();
    st.counters["cold"] = cold() ? 1 : 0;
    if (inject_fraction() > 0) st.counters["injected_ms"] = injected_.mean();
    if (with_gpu_ == 0) return;  // no telemetry: the counters are absent (the context says why)
    st.counters["sm_clock_mhz"] = sm_.mean();
    if (mem_.count()) st.counters["mem_clock_mhz"] = mem_.mean();
    if (power_.count()) st.counters["power_w"] = power_.mean();
    if (temp_.count()) st.counters["temperature_c"] = temp_.mean();
    st.counters["throttled_samples"] = throttled_;
    st.counters["clock_event_reasons"] = double(reasons_);
  }

 private:
  RunningStats ms_, injected_, sm_, mem_, power_, temp_;
  int with_gpu_ = 0, throttled_ = 0;
  std::uint64_t reasons_ = 0;
};

// The refusal's bytes at the DRAM peak. Warm, up to the L2's size of them may already sit in the
// L2: those are charged at the L2 ceiling instead of being free, so no figure escapes the refusal
// by fitting in the L2 (docs/methodology.md, "The refusal"). Cold, every byte comes from DRAM.
double charged_bytes(double min_bytes) {
  const Engine& e = engine();
  if (cold()) return min_bytes;
  const double cached = std::min(min_bytes, e.l2_bytes);
  return min_bytes - cached + (e.l2_peak > 0 ? cached * e.peak / e.l2_peak : 0.0);
}

template <class SampleFn, class WarmFn>
bool run(benchmark::State& st, SampleFn sample, WarmFn warm, const ExecOptions& o, bool host = false) {
  Engine& e = engine();
  if (!e.gpu && !host) throw Error("the measurement engine has no GPU");
  const int warmups = o.warmups >= 0 ? o.warmups : e.config.warmups;
  if (e.gpu) CUDA_CHECK(cudaDeviceSynchronize());  // the fixture's set-up may be on other streams
  e.replay_credit = 0;
  e.replay_ms = 0;
  for (int i = 0; i < warmups; ++i) warm();
  if (e.gpu) CUDA_CHECK(cudaStreamSynchronize(e.stream));
  Tally t;
  auto record = [&](const Sample& s) {
    t.add(s);
    if (o.on_sample) o.on_sample(s.ms);
  };
  const StoppingRule& rule = e.config.stopping;
  const bool adaptive = rule.enabled() && !o.fixed_samples;
  bool converged = false;
  for (auto _ : st) {
    if (!adaptive) {
      const Sample s = sample();
      record(s);
      st.SetIterationTime(s.ms / 1e3);
      continue;
    }
    // Noise-based stopping: one Google Benchmark iteration holds every sample until the rule
    // stops; its time is their mean (docs/methodology.md).
    const auto t0 = std::chrono::steady_clock::now();
    RunningStats iteration;
    StopDecision d = StopDecision::Continue;
    while (d == StopDecision::Continue) {
      const Sample s = sample();
      record(s);
      iteration.add(s.ms);
      d = stop_decision(rule, iteration, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    converged = d == StopDecision::Converged;
    st.SetIterationTime(iteration.mean() / 1e3);
  }
  if (t.ms().count() == 0) return false;  // no sample: Google Benchmark stopped the loop
  if (auto why = too_fast(t.ms().min(), charged_bytes(o.min_bytes), e.peak, 0.0)) {
    st.SkipWithError(why->c_str());
    return false;
  }
  t.publish(st);
  if (adaptive) st.counters["converged"] = converged ? 1 : 0;
  return true;
}

// SkipWithMessage where this Google Benchmark has it (>= 1.8), else a marked error.
template <class S>
auto skip_impl(S& st, const std::string& why, int) -> decltype(st.SkipWithMessage(why), void()) {
  st.SkipWithMessage(why);
}
template <class S>
void skip_impl(S& st, const std::string& why, long) {
  st.SkipWithError(("skipped: " + why).c_str());
}

}  // namespace

void init_measure(const MeasureConfig& c) {
  Engine& e = engine();
  e.config = c;
  e.gpu = device_status().available;
  if (!e.gpu) {
    const Telemetry probe("");  // only to say whether NVML itself is there
    e.telemetry_status = "no GPU" + (probe.available() ? std::string() : " (" + probe.reason() + ")");
    return;
  }
  const DeviceStatus& d = device_status();
  // A blocking stream: ordered with the legacy default stream, as the fixtures' set-up is.
  CUDA_CHECK(cudaStreamCreateWithFlags(&e.stream, cudaStreamDefault));
  e.start = std::make_unique<Event>();
  e.stop = std::make_unique<Event>();
  e.replay_start = std::make_unique<Event>();
  e.replay_stop = std::make_unique<Event>();
  int mem_khz = 0, bus_bits = 0;  // unknown (0): no refusal
  if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, d.device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, d.device) != cudaSuccess) {
    cudaGetLastError();
    mem_khz = bus_bits = 0;
  }
  e.peak = peak_dram_bytes_per_s(mem_khz, bus_bits);
  e.l2_bytes = d.props.l2CacheSize;
  // 128 bytes a clock per SM (an SM's L1 returns at most that) at the SM's highest clock: above
  // any L2 read rate the card reaches. Unknown clock: the L2 bytes are free (the old rule).
  int sm_khz = 0;
  if (cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, d.device) != cudaSuccess) {
    cudaGetLastError();
    sm_khz = 0;
  }
  e.l2_peak = 128.0 * d.props.multiProcessorCount * sm_khz * 1e3;
  if (c.mode == CacheMode::Cold)
    e.flush = DeviceBuffer(2 * static_cast<std::size_t>(std::max(d.props.l2CacheSize, 1 << 20)), "L2 flush buffer");
  if (!c.telemetry) {
    e.telemetry_status = "off (--no-telemetry)";
    return;
  }
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, d.device));
  e.telemetry = std::make_unique<Telemetry>(bus);
  if (!e.telemetry->available()) {
    e.telemetry_status = e.telemetry->reason();
    e.telemetry.reset();
    return;
  }
  e.telemetry_status = "on (NVML, driver " + e.telemetry->driver_version() + ", max SM clock " +
                       std::to_string(static_cast<int>(e.telemetry->max_sm_clock_mhz())) + " MHz)";
}

void shutdown_measure() {
  Engine& e = engine();
  e.telemetry.reset();
  e.last_reading.reset();
  e.flush = DeviceBuffer();
  e.start.reset();
  e.stop.reset();
  e.replay_start.reset();
  e.replay_stop.reset();
  if (e.stream) cudaStreamDestroy(e.stream);
  e.stream = nullptr;
  e.gpu = false;
}

const MeasureConfig& measure_config() { return engine().config; }
std::string measure_mode_name() { return cold() ? "cold" : "warm"; }
std::string telemetry_status() { return engine().telemetry_status; }
double peak_dram_bytes_per_s() { return engine().peak; }
double l2_credit_bytes() { return cold() ? 0.0 : engine().l2_bytes; }
double l2_peak_bytes_per_s() { return engine().l2_peak; }
std::size_t l2_flush_bytes() { return engine().flush.bytes(); }
cudaStream_t measure_stream() { return engine().stream; }

std::string stopping_description() {
  const StoppingRule& r = engine().config.stopping;
  if (!r.enabled()) return "google-benchmark";
  char buf[160];
  std::snprintf(buf, sizeof buf, "rsd <= %g %%, >= %d samples, >= %g s measured, <= %g s wall", 100 * r.target_rsd,
                r.min_samples, r.min_time_s, r.max_time_s);
  return buf;
}

namespace {

// The device work once more on the engine's stream (its preparation and flush untimed, as a
// sample's), timed by the replay's own events.
double replay_device(const DeviceWork& work, const DeviceWork& prepare) {
  Engine& e = device_engine();
  if (prepare) prepare(e.stream);
  if (cold()) flush_l2(e.stream);
  e.replay_start->record(e.stream);
  work(e.stream);
  e.replay_stop->record(e.stream);
  return elapsed_ms(*e.replay_start, *e.replay_stop);
}

void inject(Sample& s, const std::function<double()>& replay) {
  if (!(inject_fraction() > 0)) return;
  s.injected_ms = injected_ms(s.ms, replay);
  s.ms += s.injected_ms;
}

}  // namespace

Sample sample_once(const DeviceWork& work, const DeviceWork& prepare) {
  Engine& e = device_engine();
  if (prepare) prepare(e.stream);
  if (cold()) flush_l2(e.stream);
  e.start->record(e.stream);
  work(e.stream);
  e.stop->record(e.stream);
  Sample s;
  s.gpu = read_gpu();  // while the work runs (just after it, for work shorter than the queries)
  s.ms = elapsed_ms(*e.start, *e.stop);
  inject(s, [&] { return replay_device(work, prepare); });
  return s;
}

Sample sample_once_timed(const TimedWork& work, const DeviceWork& prepare) {
  Engine& e = engine();
  if (prepare) prepare(e.stream);
  if (cold()) flush_l2(e.stream);
  CUDA_CHECK(cudaStreamSynchronize(e.stream));  // the work may use a stream of its own
  Sample s;
  s.ms = work(e.stream);
  s.gpu = read_gpu();
  inject(s, [&] {
    if (prepare) prepare(e.stream);
    if (cold()) flush_l2(e.stream);
    CUDA_CHECK(cudaStreamSynchronize(e.stream));
    return work(e.stream);
  });
  return s;
}

bool exec(benchmark::State& st, const DeviceWork& work, const ExecOptions& o) {
  return run(
      st, [&] { return sample_once(work, o.prepare); },
      [&] {
        if (o.prepare) o.prepare(engine().stream);
        work(engine().stream);
      },
      o);
}

bool exec_timed(benchmark::State& st, const TimedWork& work, const ExecOptions& o) {
  return run(
      st, [&] { return sample_once_timed(work, o.prepare); },
      [&] {
        if (o.prepare) o.prepare(engine().stream);
        CUDA_CHECK(cudaStreamSynchronize(engine().stream));
        work(engine().stream);
      },
      o);
}

bool exec_host(benchmark::State& st, const HostWork& work, const ExecOptions& o) {
  if (o.prepare) throw Error("host work has no device preparation");
  auto timed = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  auto sample = [&] {
    Sample s;
    s.ms = timed();
    if (engine().gpu) s.gpu = read_gpu();
    inject(s, timed);
    return s;
  };
  return run(st, sample, work, o, true);
}

double reference_ms(const DeviceWork& work, int reps, int warmups, Pick pick) {
  if (reps < 1) throw Error("reference_ms: at least one sample");
  Engine& e = device_engine();
  for (int i = 0; i < warmups; ++i) work(e.stream);
  // Never slowed by --inject-slowdown: the references are what the fixtures are compared with.
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    e.start->record(e.stream);
    work(e.stream);
    e.stop->record(e.stream);
    ms.push_back(elapsed_ms(*e.start, *e.stop));
  }
  if (pick == Pick::Least) return *std::min_element(ms.begin(), ms.end());
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

void skip(benchmark::State& st, const std::string& reason) { skip_impl(st, reason, 0); }

}  // namespace distancies::bench
