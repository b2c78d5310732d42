#include "harness/bench/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>

#include "runtime/device.hpp"
#include "runtime/error.hpp"

namespace distancies::bench {

void launch_spin(double ms, cudaStream_t stream);  // measure_inject.cu

namespace {

struct Engine {
  MeasureConfig config;
  bool gpu = false;
  cudaStream_t stream{};
  std::unique_ptr<Event> start, stop;
  std::unique_ptr<Event> mid, pad;   // --inject-slowdown: the work's end, the busy-wait's start
  std::vector<double> work_history;  // --inject-slowdown: this fixture's un-injected sample times
  DeviceBuffer flush;                // cold mode: >= 2x the L2, allocated once
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

bool cold() { return engine().config.mode == CacheMode::Cold; }

double inject_fraction() { return engine().config.inject_slowdown_pct / 100.0; }

// The injected wait follows the fixture's running median (of its un-injected times), so one slow
// sample does not lengthen the next one's wait.
double inject_target_ms() {
  std::vector<double> h = engine().work_history;
  if (h.empty()) return 0;
  const auto mid = h.begin() + static_cast<std::ptrdiff_t>(h.size() / 2);
  std::nth_element(h.begin(), mid, h.end());
  double m = *mid;
  if (h.size() % 2 == 0) m = (m + *std::max_element(h.begin(), mid)) / 2;
  return inject_fraction() * m;
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
  e.work_history.clear();
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
  e.mid = std::make_unique<Event>();
  e.pad = std::make_unique<Event>();
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
  e.mid.reset();
  e.pad.reset();
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

// --inject-slowdown on device work: the busy-wait runs on the engine's stream right after the
// work, inside the sample's events. Its length comes from the samples before; the first sample
// (nothing before it) waits for its own work and counts the wait alone, not the host's gap.
Sample sample_once_injected(const DeviceWork& work) {
  Engine& e = engine();
  e.start->record(e.stream);
  work(e.stream);
  e.mid->record(e.stream);
  const bool first = e.work_history.empty();
  if (first) CUDA_CHECK(cudaEventSynchronize(e.mid->get()));
  const double target = first ? inject_fraction() * elapsed_ms(*e.start, *e.mid) : inject_target_ms();
  e.pad->record(e.stream);
  launch_spin(target, e.stream);
  e.stop->record(e.stream);
  Sample s;
  s.gpu = read_gpu();
  const double work_ms = elapsed_ms(*e.start, *e.mid);
  s.injected_ms = first ? elapsed_ms(*e.pad, *e.stop) : elapsed_ms(*e.mid, *e.stop);
  s.ms = work_ms + s.injected_ms;
  e.work_history.push_back(work_ms);
  return s;
}

// --inject-slowdown after self-timed work: the busy-wait on the engine's stream, timed by the
// engine's events, is added to the time the work reported.
void inject_after_timed(Sample& s) {
  Engine& e = engine();
  e.work_history.push_back(s.ms);
  e.pad->record(e.stream);
  launch_spin(inject_target_ms(), e.stream);
  e.stop->record(e.stream);
  s.injected_ms = elapsed_ms(*e.pad, *e.stop);
  s.ms += s.injected_ms;
}

}  // namespace

Sample sample_once(const DeviceWork& work, const DeviceWork& prepare) {
  Engine& e = engine();
  if (prepare) prepare(e.stream);
  if (cold()) flush_l2(e.stream);
  if (inject_fraction() > 0) return sample_once_injected(work);
  e.start->record(e.stream);
  work(e.stream);
  e.stop->record(e.stream);
  Sample s;
  s.gpu = read_gpu();  // while the work runs (just after it, for work shorter than the queries)
  s.ms = elapsed_ms(*e.start, *e.stop);
  return s;
}

double inject_host_delay_ms(double ms) {
  if (!(inject_fraction() > 0 && ms > 0)) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(inject_fraction() * ms));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Sample sample_once_timed(const TimedWork& work, const DeviceWork& prepare) {
  Engine& e = engine();
  if (prepare) prepare(e.stream);
  if (cold()) flush_l2(e.stream);
  CUDA_CHECK(cudaStreamSynchronize(e.stream));  // the work may use a stream of its own
  Sample s;
  s.ms = work(e.stream);
  s.gpu = read_gpu();
  if (inject_fraction() > 0) inject_after_timed(s);
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
  auto sample = [&] {
    Engine& e = engine();
    const auto t0 = std::chrono::steady_clock::now();
    work();
    Sample s;
    s.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (e.gpu) s.gpu = read_gpu();
    if (inject_fraction() > 0) {
      e.work_history.push_back(s.ms);
      s.injected_ms = inject_host_delay_ms(inject_target_ms() / inject_fraction());
      s.ms += s.injected_ms;
    }
    return s;
  };
  return run(st, sample, work, o, true);
}

double reference_ms(const DeviceWork& work, int reps, int warmups, Pick pick) {
  if (reps < 1) throw Error("reference_ms: at least one sample");
  for (int i = 0; i < warmups; ++i) work(engine().stream);
  // Never slowed by --inject-slowdown: the references are what the fixtures are compared with.
  Engine& e = engine();
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
