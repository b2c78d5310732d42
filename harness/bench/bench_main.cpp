// distancies-bench: every registered dot variant, top-k stage and pipeline as a Google
// Benchmark fixture over the real-shaped model. Our flags first, then Google Benchmark's.
#include <benchmark/benchmark.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/context.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/device.hpp"

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // takes the --benchmark_* flags out of argv
  distancies::bench::BenchConfig c;
  CLI::App app{"distancies-bench: Google Benchmark fixtures for every registered variant.\n"
               "Google Benchmark's own flags (--benchmark_filter, --benchmark_repetitions, --benchmark_out, ...) "
               "pass through."};
  app.add_option("--model", c.model_path, "Model file (any readable format); default: synthetic, generated on the GPU");
  app.add_option("--rows", c.rows, "Synthetic model rows")->check(CLI::Range(10LL, 2147483647LL));
  app.add_option("--dim", c.dim, "Synthetic model dimensions")->check(CLI::Range(1, 12288));
  app.add_option("--seed", c.seed, "Synthetic model seed");
  app.add_option("--query", c.query, "Query word or expression");
  app.add_option("-k", c.k, "Results per query")->check(CLI::Range(1, 1 << 20));
  bool no_host = false;
  app.add_flag("--no-host-copy", no_host, "Keep no host copy of the vectors (skips V1 and the CPU fixtures)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  c.host_copy = !no_host;
  try {
    const auto& dev = distancies::device_status();
    if (!dev.available)
      std::fprintf(stderr, "distancies-bench: no usable CUDA GPU (%s): running the CPU fixtures only\n",
                   dev.reason.c_str());
    distancies::bench::init_bench_state(c);
    distancies::bench::add_context();
    distancies::bench::register_fixtures(dev.available);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distancies-bench: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
