// The measurement engine every GPU fixture uses (the role of nvbench's state.exec): warm-ups,
// CUDA-event timing on the engine's stream, warm (back to back) or cold (L2 flushed before every
// sample) mode, per-sample GPU telemetry (NVML), optional noise-based stopping, and the refusal
// of figures faster than reading the bytes the work must read allows. docs/methodology.md defines it all.
//
// A fixture (fixture_util.hpp for add, timed, parameters):
//   void my_fixture(benchmark::State& st, int rows) {
//     DeviceBuffer in(bytes, "input"), out(rows * sizeof(float), "output");   // set-up: untimed
//     auto work = [&](cudaStream_t s) { launch_my_kernel(in, out, rows, s); };  // checks its launch
//     if (!exec(st, work, double(bytes))) return;  // refused: too fast for its bytes
//     parameters(st, {{"rows", double(rows)}});
//   }
//   timed(add("study/my_kernel/rows:" + std::to_string(rows), my_fixture, rows));
#pragma once
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <functional>
#include <optional>
#include <string>

#include "harness/bench/measure_stats.hpp"
#include "runtime/telemetry.hpp"

namespace distancies::bench {

enum class CacheMode { Warm, Cold };

struct MeasureConfig {
  CacheMode mode = CacheMode::Warm;
  int warmups = 3;
  bool telemetry = true;
  StoppingRule stopping;  // disabled (target_rsd 0): Google Benchmark picks the iteration count
  // > 0: the work is run this many percent more often (a replay every 100 / pct samples, outside
  // the samples) and every sample is charged that percentage of the last replay's measured time:
  // the regression gate's calibration (docs/regression.md). Never set in a real run.
  double inject_slowdown_pct = 0;
};

// Sets the engine up once, after the device probe: its stream, the flush buffer (cold mode),
// NVML. Without a GPU only the configuration is kept. shutdown_measure() releases it all.
void init_measure(const MeasureConfig& c);
void shutdown_measure();
const MeasureConfig& measure_config();

// What the run's JSON context says about the engine.
std::string measure_mode_name();     // "warm" or "cold"
std::string stopping_description();  // "google-benchmark" or the rule
std::string telemetry_status();      // "on (driver ...)" or why there is none
double peak_dram_bytes_per_s();      // 0 without a GPU
// What the refusal may take from the L2 (warm mode; 0 when cold) and its ceiling (bytes per s).
double l2_credit_bytes();
double l2_peak_bytes_per_s();
std::size_t l2_flush_bytes();  // 0 in warm mode

// Device work: enqueues everything it does on the stream it is given.
using DeviceWork = std::function<void(cudaStream_t)>;
// Work that times itself (the searchers' stage breakdowns): runs once, synchronously, and
// returns its own time in ms. It may use its own stream; it gets the engine's.
using TimedWork = std::function<double(cudaStream_t)>;

struct ExecOptions {
  double min_bytes = 0;                      // bytes the work must read at least (the refusal); 0: no refusal
  DeviceWork prepare;                        // untimed, before every warm-up and sample (restores an in-place input)
  std::function<void(double ms)> on_sample;  // after every recorded sample (derived counters)
  int warmups = -1;                          // -1: the configured count
  bool fixed_samples = false;                // the fixture sets Iterations(N) (a study protocol): no noise stopping
};

// The engine's core, free of Google Benchmark: one timed sample.
struct Sample {
  double ms = 0;
  double injected_ms = 0;        // of ms, the charge for the replayed work (--inject-slowdown)
  std::optional<GpuSample> gpu;  // the GPU's state while (or just after) the sample ran
};
Sample sample_once(const DeviceWork& work, const DeviceWork& prepare = {});
Sample sample_once_timed(const TimedWork& work, const DeviceWork& prepare = {});
cudaStream_t measure_stream();

// Runs the Google Benchmark loop of a fixture on the engine and publishes its counters
// (docs/methodology.md). Returns false when the figure was refused (the fixture is an error).
bool exec(benchmark::State& st, const DeviceWork& work, const ExecOptions& o = {});
bool exec_timed(benchmark::State& st, const TimedWork& work, const ExecOptions& o = {});
// Host work (a CPU search, a CPU peer): run synchronously and timed by the host clock, with the
// engine's warm-ups, stopping rule, injected slowdown and counters; it needs no GPU (no telemetry
// then). o.prepare must be empty.
using HostWork = std::function<void()>;
bool exec_host(benchmark::State& st, const HostWork& work, const ExecOptions& o = {});
// A reference time outside any fixture (a floor's read, a peer library's anchor): `reps` samples
// of `work` on the engine's stream after `warmups`, their median or least, in ms.
enum class Pick { Median, Least };
double reference_ms(const DeviceWork& work, int reps, int warmups, Pick pick);
// The common case: device work and the bytes it must read at least.
inline bool exec(benchmark::State& st, const DeviceWork& work, double min_bytes) {
  ExecOptions o;
  o.min_bytes = min_bytes;
  return exec(st, work, o);
}

// A fixture that cannot do its case: skipped with the reason, no time reported. Google
// Benchmark >= 1.8: SkipWithMessage; older: SkipWithError("skipped: <reason>").
void skip(benchmark::State& st, const std::string& reason);

}  // namespace distancies::bench
