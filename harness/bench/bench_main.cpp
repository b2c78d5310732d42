// distancies-bench: every registered dot variant, top-k stage and pipeline as a Google
// Benchmark fixture over the real-shaped model. Our options first, then Google Benchmark's
// (--help shows both, ours above).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/context.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "harness/bench/suite_run.hpp"
#include "runtime/device.hpp"
#include "variants/registry_model.hpp"

namespace {

using distancies::bench::CacheMode;

CLI::App* g_app = nullptr;

// --help: the harness's options, then Google Benchmark's.
void print_help() {
  std::fputs(g_app->help().c_str(), stdout);
  std::fputs("\nGoogle Benchmark's options (pass through):\n", stdout);
  benchmark::PrintDefaultHelp();
  std::fflush(stdout);
}

bool asks_for_help(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help" || a == "-help") return true;
  }
  return false;
}

// Everything the command line sets.
struct Options {
  distancies::bench::BenchConfig c;
  distancies::bench::MeasureConfig mc;
  distancies::bench::SuiteOptions so;
  std::string mode = "warm";
  bool no_host = false, no_telemetry = false, full = false;
  double target_pct = 0;
};

void add_model_options(CLI::App& app, Options& o) {
  const char* model = "Model and query";
  app.add_option("--model", o.c.model_path,
                 "Model file (any readable format); default: synthetic, generated on the GPU")
      ->group(model);
  app.add_option("--rows", o.c.rows, "Synthetic model rows")->check(CLI::Range(10LL, 2147483647LL))->group(model);
  app.add_option("--dim", o.c.dim, "Synthetic model dimensions")->check(CLI::Range(1, 12288))->group(model);
  app.add_option("--seed", o.c.seed, "Synthetic model seed")->group(model);
  app.add_option("--family", o.c.family,
                 "Synthetic model's data family: iid, aniso:C, dirs:C, clustered, heavy (docs/data.md)")
      ->capture_default_str()
      ->group(model);
  app.add_option("--query", o.c.query, "Query word or expression")->group(model);
  app.add_option("-k", o.c.k, "Results per query")->check(CLI::Range(1, 1 << 20))->group(model);
  app.add_option("--shard-rows", o.c.shard_rows,
                 "shard/* fixtures over a synthetic model of this many rows, each rank generating only its shard on "
                 "its GPU (a model larger than one GPU: docs/scale.md)")
      ->check(CLI::Range(10LL, 2147483647LL))
      ->group(model);
  app.add_option("--stream-rows", o.c.stream_rows,
                 "Also stream/* fixtures over a synthetic model of this many rows kept in page-locked host memory "
                 "(larger than the GPU: docs/scale.md)")
      ->check(CLI::Range(10LL, 2147483647LL))
      ->group(model);
  app.add_flag("--no-host-copy", o.no_host, "Keep no host copy of the vectors (skips V1 and the CPU fixtures)")
      ->group(model);
}

void add_measure_options(CLI::App& app, Options& o) {
  const char* measure = "Measurement";
  app.add_option("--mode", o.mode,
                 "warm: samples back to back (the L2 keeps what fits); cold: the L2 flushed before every sample")
      ->check(CLI::IsMember({"warm", "cold"}))
      ->capture_default_str()
      ->group(measure);
  app.add_option("--warmups", o.mc.warmups, "Untimed runs before the samples")
      ->check(CLI::Range(0, 1000))
      ->default_str("3")
      ->group(measure);
  app.add_flag("--no-telemetry", o.no_telemetry, "No NVML readings (clocks, power, temperature) per sample")
      ->group(measure);
  app.add_option("--inject-slowdown", o.mc.inject_slowdown_pct,
                 "Make every sample this many percent slower by running the work that much more often, "
                 "measured (calibrating the regression gate only: the JSON context records it and "
                 "scripts/ci/compare.py refuses such a baseline)")
      ->check(CLI::Range(0.0, 1000.0))
      ->group(measure);
  const char* stopping = "Noise-based stopping (off by default: Google Benchmark picks the iteration count)";
  auto* rsd = app.add_option("--target-rsd", o.target_pct,
                             "Sample until the samples' relative standard deviation is at most this many percent; "
                             "one Google Benchmark iteration then holds all of a repetition's samples")
                  ->check(CLI::Range(0.0, 100.0))
                  ->group(stopping);
  app.add_option("--min-samples", o.mc.stopping.min_samples, "Samples before the rule may stop")
      ->check(CLI::Range(2, 1000000))
      ->default_str("10")
      ->needs(rsd)
      ->group(stopping);
  app.add_option("--min-time", o.mc.stopping.min_time_s, "Seconds of measured time before the rule may stop")
      ->check(CLI::Range(0.0, 3600.0))
      ->default_str("0.5")
      ->needs(rsd)
      ->group(stopping);
  app.add_option("--max-time", o.mc.stopping.max_time_s, "Seconds of wall time after which a fixture stops unconverged")
      ->check(CLI::Range(0.001, 3600.0))
      ->default_str("5")
      ->needs(rsd)
      ->group(stopping);
}

void add_run_options(CLI::App& app, Options& o) {
  const char* run = "Suite, progress and output (docs/methodology.md, \"Suites, progress, resume\")";
  app.add_option("--suite", o.so.suite,
                 "main: the study's tables and each study's headline comparison, 3 repetitions (the default); "
                 "full: every fixture (the default when --benchmark_filter is given)")
      ->check(CLI::IsMember({"main", "full"}))
      ->group(run);
  app.add_flag("--full", o.full, "The same as --suite full")->group(run);
  app.add_option("--out", o.so.out,
                 "JSON file rewritten after every fixture (Google Benchmark's schema; valid if the run is killed)")
      ->group(run);
  app.add_option("--resume", o.so.resume,
                 "Continue the run in this JSON file: its fixtures are not run again, the new ones are added to it "
                 "(or to --out)")
      ->group(run);
  app.add_option("--estimate-from", o.so.estimate_from,
                 "An earlier run's JSON whose fixture wall times give the expected duration and the ETA "
                 "(default: the --out file, when it exists)")
      ->group(run);
}

// A rank of a sharded run (scripts/shard_launch.sh): its own GPU for everything, and its own
// JSON file (rank 0 writes the one named; rank r writes NAME.rankR). `storage` keeps the
// rewritten arguments that argv then points into.
void claim_rank(int argc, char** argv, std::vector<std::string>& storage) {
  storage.reserve(static_cast<std::size_t>(argc));
  if (const char* r = std::getenv("DISTANCIES_RANK")) {
    const char* local = std::getenv("DISTANCIES_LOCAL_RANK");
    cudaSetDevice(std::atoi(local ? local : r));  // errors surface at the device probe below
    if (std::atoi(r) > 0)
      for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--benchmark_out=", 16) == 0) {
          storage.push_back(std::string(argv[i]) + ".rank" + r);
          argv[i] = storage.back().data();
        }
  }
}

// The configuration the options give, then the registry check, the engine and the suite.
int run(Options& o, const distancies::bench::BenchmarkFlags& gb_flags) {
  o.c.host_copy = !o.no_host;
  o.mc.telemetry = !o.no_telemetry;
  o.mc.mode = o.mode == "cold" ? CacheMode::Cold : CacheMode::Warm;
  o.mc.stopping.target_rsd = o.target_pct / 100.0;
  if (o.full) o.so.suite = "full";
  try {
    distancies::registry::check_all();  // a bad registry row is an error here, never at launch
    const auto& dev = distancies::device_status();
    if (!dev.available)
      std::fprintf(stderr, "distancies-bench: no usable CUDA GPU (%s): running the CPU fixtures only\n",
                   dev.reason.c_str());
    distancies::bench::init_measure(o.mc);
    distancies::bench::init_bench_state(o.c);
    distancies::bench::add_context();
    const int status = distancies::bench::run_suite(o.so, gb_flags, dev.available);
    benchmark::Shutdown();
    if (status != 0) return status;
    distancies::bench::release_scale_fixtures();  // NCCL and pinned memory before static teardown
    distancies::bench::shutdown_measure();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distancies-bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "distancies-bench: Google Benchmark fixtures for every registered variant, timed by one "
      "measurement engine (docs/methodology.md)."};
  app.name("distancies-bench");
  g_app = &app;
  app.failure_message(
      [](const CLI::App*, const CLI::Error& e) { return std::string("distancies-bench: error: ") + e.what() + "\n"; });
  add_model_options(app, o);
  add_measure_options(app, o);
  add_run_options(app, o);
  app.footer(
      "Google Benchmark's own flags (--benchmark_filter, --benchmark_repetitions, --benchmark_out, ...) "
      "pass through; --help lists them below.");
  if (asks_for_help(argc, argv)) {
    print_help();
    return 0;
  }
  std::vector<std::string> rank_args;
  claim_rank(argc, argv, rank_args);
  const auto gb_flags = distancies::bench::scan_benchmark_flags(argc, argv);  // before Initialize takes them
  benchmark::Initialize(&argc, argv, print_help);  // takes the --benchmark_* flags out of argv
  try {
    app.parse(argc, argv);
    if (o.mc.stopping.max_time_s < o.mc.stopping.min_time_s)
      throw CLI::ValidationError("--max-time", "must be at least --min-time");
    if (o.full && !o.so.suite.empty() && o.so.suite != "full")
      throw CLI::ValidationError("--full", "contradicts --suite " + o.so.suite);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return run(o, gb_flags);
}
