#include "harness/bench/context.hpp"
#include "variants/embeddings/policy.hpp"

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/measure.hpp"
#include "harness/synthetic.hpp"
#include "harness/version.hpp"
#include "runtime/device.hpp"

namespace distancies::bench {
namespace {

// One line of `nvidia-smi --query-gpu=...` (clocks as the card was found), or "".
std::string nvidia_smi(const char* fields) {
  const std::string cmd = std::string("nvidia-smi --query-gpu=") + fields + " --format=csv,noheader 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  if (!p) return "";
  std::array<char, 512> buf{};
  std::string out;
  if (fgets(buf.data(), buf.size(), p.get())) out = buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

void add_context() {
  using benchmark::AddCustomContext;
  const BenchState& s = bench_state();
  const DeviceStatus& d = device_status();
  AddCustomContext("distancies_commit", git_commit());
  AddCustomContext("distancies_version", DISTANCIES_VERSION);
  AddCustomContext("build_type", DISTANCIES_BUILD_TYPE);
  AddCustomContext("cuda_architectures", DISTANCIES_CUDA_ARCHS);
  AddCustomContext("model_source", s.source);
  AddCustomContext("model_family", s.config.model_path.empty() ? family_name(s.family) : "file");
  AddCustomContext("model_rows", std::to_string(s.host.rows));
  AddCustomContext("model_dim", std::to_string(s.host.dim));
  AddCustomContext("model_bytes", std::to_string(static_cast<long long>(s.model_bytes())));
  AddCustomContext("query", s.config.query);
  AddCustomContext("k", std::to_string(s.config.k));
  // The measurement engine (docs/methodology.md): cache mode, stopping rule, telemetry.
  AddCustomContext("measure_mode", measure_mode_name());
  AddCustomContext("measure_warmups", std::to_string(measure_config().warmups));
  AddCustomContext("stopping", stopping_description());
  AddCustomContext("nvml", telemetry_status());
  // Always written (0 in a real run), so a calibration run with an injected slowdown is never taken for one.
  char inject[32];
  std::snprintf(inject, sizeof inject, "%g", measure_config().inject_slowdown_pct);
  AddCustomContext("inject_slowdown_pct", inject);
  if (!d.available) {
    AddCustomContext("gpu", "none (" + d.reason + ")");
    return;
  }
  AddCustomContext("gpu", d.props.name);
  AddCustomContext("gpu_sm_count", std::to_string(d.props.multiProcessorCount));
  AddCustomContext("gpu_compute_capability", std::to_string(d.props.major) + "." + std::to_string(d.props.minor));
  AddCustomContext("pipeline_policy", policy::policy_for(d.props.major, d.props.minor));
  AddCustomContext("gpu_memory_gib", std::to_string(d.props.totalGlobalMem / double(1 << 30)));
  AddCustomContext("gpu_l2_bytes", std::to_string(d.props.l2CacheSize));
  int clock_khz = 0, mem_clock_khz = 0, bus_bits = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0) == cudaSuccess)
    AddCustomContext("gpu_max_sm_clock_mhz", std::to_string(clock_khz / 1000));
  if (cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, 0) == cudaSuccess &&
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0) == cudaSuccess) {
    AddCustomContext("gpu_memory_clock_mhz", std::to_string(mem_clock_khz / 1000));
    AddCustomContext("gpu_memory_bus_bits", std::to_string(bus_bits));
  }
  cudaGetLastError();
  AddCustomContext("cuda_driver", version_string(d.driver_version));
  AddCustomContext("cuda_runtime", version_string(d.runtime_version));
  const std::string smi = nvidia_smi("driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.limit,pstate");
  if (!smi.empty()) AddCustomContext("nvidia_smi_driver_sm_mem_maxsm_power_pstate", smi);
  AddCustomContext("peak_dram_gb_per_s", std::to_string(peak_dram_bytes_per_s() / 1e9));
  AddCustomContext("l2_flush_bytes", std::to_string(l2_flush_bytes()));
  AddCustomContext("floor_ms", std::to_string(s.floor_ms));
  AddCustomContext("floor_gb_per_s", std::to_string(s.model_bytes() / (s.floor_ms * 1e6)));
}

}  // namespace distancies::bench
