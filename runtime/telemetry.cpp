#include "runtime/telemetry.hpp"

#include <cmath>
#include <limits>

#if DISTANCIES_HAVE_NVML
#include <dlfcn.h>
#include <nvml.h>
#endif

namespace distancies {

bool is_throttled(const GpuSample& s, double max_sm_clock_mhz) {
  if (s.clock_event_reasons & clock_reason::kPowerThermal) return true;
  return max_sm_clock_mhz > 0 && s.sm_clock_mhz < kThrottleClockFraction * max_sm_clock_mhz;
}

#if DISTANCIES_HAVE_NVML

static_assert(clock_reason::kGpuIdle == nvmlClocksThrottleReasonGpuIdle);
static_assert(clock_reason::kSwPowerCap == nvmlClocksThrottleReasonSwPowerCap);
static_assert(clock_reason::kHwSlowdown == nvmlClocksThrottleReasonHwSlowdown);
static_assert(clock_reason::kSwThermalSlowdown == nvmlClocksThrottleReasonSwThermalSlowdown);
static_assert(clock_reason::kHwThermalSlowdown == nvmlClocksThrottleReasonHwThermalSlowdown);
static_assert(clock_reason::kHwPowerBrakeSlowdown == nvmlClocksThrottleReasonHwPowerBrakeSlowdown);

// The entry points we use, resolved from the driver's library. Two are deprecated in the CUDA
// 13 header but are the ones every driver exports, so their types are spelled out here.
struct Telemetry::Api {
  void* lib = nullptr;
  bool initialised = false;
  nvmlDevice_t dev{};
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlShutdown) shutdown = nullptr;
  decltype(&nvmlErrorString) error_string = nullptr;
  decltype(&nvmlSystemGetDriverVersion) driver_version = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) by_bus_id = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  decltype(&nvmlDeviceGetMaxClockInfo) max_clock = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*) = nullptr;
  nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long*) = nullptr;

  template <class Fn>
  bool resolve(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(dlsym(lib, name));
    return fn != nullptr;
  }
  std::string error(nvmlReturn_t r) const { return error_string ? error_string(r) : "NVML error " + std::to_string(r); }
};

Telemetry::Telemetry(const std::string& pci_bus_id) : api_(std::make_unique<Api>()) {
  Api& a = *api_;
  a.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!a.lib) {
    reason_ = "libnvidia-ml.so.1 not found";
    return;
  }
  const char* missing = nullptr;
  if (!a.resolve(a.init, "nvmlInit_v2"))
    missing = "nvmlInit_v2";
  else if (!a.resolve(a.shutdown, "nvmlShutdown"))
    missing = "nvmlShutdown";
  else if (!a.resolve(a.by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2"))
    missing = "nvmlDeviceGetHandleByPciBusId_v2";
  else if (!a.resolve(a.clock, "nvmlDeviceGetClockInfo"))
    missing = "nvmlDeviceGetClockInfo";
  else if (!a.resolve(a.max_clock, "nvmlDeviceGetMaxClockInfo"))
    missing = "nvmlDeviceGetMaxClockInfo";
  else if (!a.resolve(a.power, "nvmlDeviceGetPowerUsage"))
    missing = "nvmlDeviceGetPowerUsage";
  else if (!a.resolve(a.temperature, "nvmlDeviceGetTemperature"))
    missing = "nvmlDeviceGetTemperature";
  else if (!a.resolve(a.reasons, "nvmlDeviceGetCurrentClocksEventReasons") &&
           !a.resolve(a.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons"))
    missing = "nvmlDeviceGetCurrentClocksEventReasons";
  a.resolve(a.error_string, "nvmlErrorString");
  a.resolve(a.driver_version, "nvmlSystemGetDriverVersion");
  if (missing) {
    reason_ = std::string("libnvidia-ml.so.1 has no ") + missing;
    return;
  }
  nvmlReturn_t r = a.init();
  if (r != NVML_SUCCESS) {
    reason_ = "nvmlInit failed: " + a.error(r);
    return;
  }
  a.initialised = true;
  if ((r = a.by_bus_id(pci_bus_id.c_str(), &a.dev)) != NVML_SUCCESS) {
    reason_ = "NVML has no GPU at PCI " + pci_bus_id + ": " + a.error(r);
    return;
  }
  unsigned int mhz = 0;
  if (a.max_clock(a.dev, NVML_CLOCK_SM, &mhz) == NVML_SUCCESS) max_sm_clock_mhz_ = mhz;
  available_ = true;
}

Telemetry::~Telemetry() {
  if (api_->initialised) api_->shutdown();
  if (api_->lib) dlclose(api_->lib);
}

std::string Telemetry::driver_version() const {
  char buf[96] = {};
  if (!api_->initialised || !api_->driver_version || api_->driver_version(buf, sizeof buf) != NVML_SUCCESS) return "";
  return buf;
}

std::optional<GpuSample> Telemetry::sample() const {
  if (!available_) return std::nullopt;
  const Api& a = *api_;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  GpuSample s;
  unsigned int v = 0;
  unsigned long long bits = 0;
  if (a.clock(a.dev, NVML_CLOCK_SM, &v) != NVML_SUCCESS) return std::nullopt;  // the one reading we need
  s.sm_clock_mhz = v;
  s.mem_clock_mhz = a.clock(a.dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS ? v : nan;
  s.power_w = a.power(a.dev, &v) == NVML_SUCCESS ? v / 1000.0 : nan;  // milliwatts
  s.temperature_c = a.temperature(a.dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS ? v : nan;
  s.clock_event_reasons = a.reasons(a.dev, &bits) == NVML_SUCCESS ? bits : 0;
  return s;
}

#else  // built without nvml.h

struct Telemetry::Api {};

Telemetry::Telemetry(const std::string&) : api_(std::make_unique<Api>()) {
  reason_ = "built without nvml.h (install nvidia-nvml-dev, scripts/requirements.txt, and configure again)";
}
Telemetry::~Telemetry() = default;
std::string Telemetry::driver_version() const { return ""; }
std::optional<GpuSample> Telemetry::sample() const { return std::nullopt; }

#endif

}  // namespace distancies
