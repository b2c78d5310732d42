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

}  // namespace

int main(int argc, char** argv) {
  distancies::bench::BenchConfig c;
  distancies::bench::MeasureConfig mc;
  CLI::App app{
      "distancies-bench: Google Benchmark fixtures for every registered variant, timed by one "
      "measurement engine (docs/methodology.md)."};
  app.name("distancies-bench");
  g_app = &app;
  app.failure_message(
      [](const CLI::App*, const CLI::Error& e) { return std::string("distancies-bench: error: ") + e.what() + "\n"; });
  const char* model = "Model and query";
  app.add_option("--model", c.model_path, "Model file (any readable format); default: synthetic, generated on the GPU")
      ->group(model);
  app.add_option("--rows", c.rows, "Synthetic model rows")->check(CLI::Range(10LL, 2147483647LL))->group(model);
  app.add_option("--dim", c.dim, "Synthetic model dimensions")->check(CLI::Range(1, 12288))->group(model);
  app.add_option("--seed", c.seed, "Synthetic model seed")->group(model);
  app.add_option("--family", c.family,
                 "Synthetic model's data family: iid, aniso:C, dirs:C, clustered, heavy (docs/data.md)")
      ->capture_default_str()
      ->group(model);
  app.add_option("--query", c.query, "Query word or expression")->group(model);
  app.add_option("-k", c.k, "Results per query")->check(CLI::Range(1, 1 << 20))->group(model);
  app.add_option("--shard-rows", c.shard_rows,
                 "shard/* fixtures over a synthetic model of this many rows, each rank generating only its shard on "
                 "its GPU (a model larger than one GPU: docs/scale.md)")
      ->check(CLI::Range(10LL, 2147483647LL))
      ->group(model);
  app.add_option("--stream-rows", c.stream_rows,
                 "Also stream/* fixtures over a synthetic model of this many rows kept in page-locked host memory "
                 "(larger than the GPU: docs/scale.md)")
      ->check(CLI::Range(10LL, 2147483647LL))
      ->group(model);
  bool no_host = false;
  app.add_flag("--no-host-copy", no_host, "Keep no host copy of the vectors (skips V1 and the CPU fixtures)")
      ->group(model);

  const char* measure = "Measurement";
  std::string mode = "warm";
  app.add_option("--mode", mode,
                 "warm: samples back to back (the L2 keeps what fits); cold: the L2 flushed before every sample")
      ->check(CLI::IsMember({"warm", "cold"}))
      ->capture_default_str()
      ->group(measure);
  app.add_option("--warmups", mc.warmups, "Untimed runs before the samples")
      ->check(CLI::Range(0, 1000))
      ->default_str("3")
      ->group(measure);
  bool no_telemetry = false;
  app.add_flag("--no-telemetry", no_telemetry, "No NVML readings (clocks, power, temperature) per sample")
      ->group(measure);
  app.add_option("--inject-slowdown", mc.inject_slowdown_pct,
                 "Make every sample this many percent slower by running the work that much more often, "
                 "measured (calibrating the regression gate only: the JSON context records it and "
                 "scripts/ci/compare.py refuses such a baseline)")
      ->check(CLI::Range(0.0, 1000.0))
      ->group(measure);

  const char* stopping = "Noise-based stopping (off by default: Google Benchmark picks the iteration count)";
  double target_pct = 0;
  auto* rsd = app.add_option("--target-rsd", target_pct,
                             "Sample until the samples' relative standard deviation is at most this many percent; "
                             "one Google Benchmark iteration then holds all of a repetition's samples")
                  ->check(CLI::Range(0.0, 100.0))
                  ->group(stopping);
  app.add_option("--min-samples", mc.stopping.min_samples, "Samples before the rule may stop")
      ->check(CLI::Range(2, 1000000))
      ->default_str("10")
      ->needs(rsd)
      ->group(stopping);
  app.add_option("--min-time", mc.stopping.min_time_s, "Seconds of measured time before the rule may stop")
      ->check(CLI::Range(0.0, 3600.0))
      ->default_str("0.5")
      ->needs(rsd)
      ->group(stopping);
  app.add_option("--max-time", mc.stopping.max_time_s, "Seconds of wall time after which a fixture stops unconverged")
      ->check(CLI::Range(0.001, 3600.0))
      ->default_str("5")
      ->needs(rsd)
      ->group(stopping);
  const char* run = "Suite, progress and output (docs/methodology.md, \"Suites, progress, resume\")";
  distancies::bench::SuiteOptions so;
  app.add_option("--suite", so.suite,
                 "main: the study's tables and each study's headline comparison, 3 repetitions (the default); "
                 "full: every fixture (the default when --benchmark_filter is given)")
      ->check(CLI::IsMember({"main", "full"}))
      ->group(run);
  bool full = false;
  app.add_flag("--full", full, "The same as --suite full")->group(run);
  app.add_option("--out", so.out,
                 "JSON file rewritten after every fixture (Google Benchmark's schema; valid if the run is killed)")
      ->group(run);
  app.add_option("--resume", so.resume,
                 "Continue the run in this JSON file: its fixtures are not run again, the new ones are added to it "
                 "(or to --out)")
      ->group(run);
  app.add_option("--estimate-from", so.estimate_from,
                 "An earlier run's JSON whose fixture wall times give the expected duration and the ETA "
                 "(default: the --out file, when it exists)")
      ->group(run);
  app.footer(
      "Google Benchmark's own flags (--benchmark_filter, --benchmark_repetitions, --benchmark_out, ...) "
      "pass through; --help lists them below.");

  if (asks_for_help(argc, argv)) {
    print_help();
    return 0;
  }
  // A rank of a sharded run (scripts/shard_launch.sh): its own GPU for everything, and its own
  // JSON file (rank 0 writes the one named; rank r writes NAME.rankR).
  std::vector<std::string> rank_args;
  rank_args.reserve(static_cast<std::size_t>(argc));  // argv keeps pointers into it
  if (const char* r = std::getenv("DISTANCIES_RANK")) {
    const char* local = std::getenv("DISTANCIES_LOCAL_RANK");
    cudaSetDevice(std::atoi(local ? local : r));  // errors surface at the device probe below
    if (std::atoi(r) > 0)
      for (int i = 1; i < argc; ++i)
        if (std::strncmp(argv[i], "--benchmark_out=", 16) == 0) {
          rank_args.push_back(std::string(argv[i]) + ".rank" + r);
          argv[i] = rank_args.back().data();
        }
  }
  const auto gb_flags = distancies::bench::scan_benchmark_flags(argc, argv);  // before Initialize takes them
  benchmark::Initialize(&argc, argv, print_help);  // takes the --benchmark_* flags out of argv
  try {
    app.parse(argc, argv);
    if (mc.stopping.max_time_s < mc.stopping.min_time_s)
      throw CLI::ValidationError("--max-time", "must be at least --min-time");
    if (full && !so.suite.empty() && so.suite != "full")
      throw CLI::ValidationError("--full", "contradicts --suite " + so.suite);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  c.host_copy = !no_host;
  mc.telemetry = !no_telemetry;
  mc.mode = mode == "cold" ? CacheMode::Cold : CacheMode::Warm;
  mc.stopping.target_rsd = target_pct / 100.0;
  if (full) so.suite = "full";
  try {
    distancies::registry::check_all();  // a bad registry row is an error here, never at launch
    const auto& dev = distancies::device_status();
    if (!dev.available)
      std::fprintf(stderr, "distancies-bench: no usable CUDA GPU (%s): running the CPU fixtures only\n",
                   dev.reason.c_str());
    distancies::bench::init_measure(mc);
    distancies::bench::init_bench_state(c);
    distancies::bench::add_context();
    const int status = distancies::bench::run_suite(so, gb_flags, dev.available);
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
