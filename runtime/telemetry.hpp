// GPU telemetry through NVML: clocks, power, temperature and the driver's clock-event
// (throttle) reasons of one GPU. The driver's libnvidia-ml.so.1 is opened at run time (no
// link-time dependency); where it or the header is missing, available() is false and reason()
// says why. Knows nothing of benchmarks.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace distancies {

// One reading of the GPU's state.
struct GpuSample {
  double sm_clock_mhz = 0;
  double mem_clock_mhz = 0;
  double power_w = 0;
  double temperature_c = 0;
  std::uint64_t clock_event_reasons = 0;  // NVML's nvmlClocksEventReason* bits
};

// NVML's reason bits (nvml.h's values; telemetry.cpp checks them against the header).
namespace clock_reason {
constexpr std::uint64_t kGpuIdle = 0x1;
constexpr std::uint64_t kSwPowerCap = 0x4;
constexpr std::uint64_t kHwSlowdown = 0x8;
constexpr std::uint64_t kSwThermalSlowdown = 0x20;
constexpr std::uint64_t kHwThermalSlowdown = 0x40;
constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
// The reasons that mean power or heat held the clocks down.
constexpr std::uint64_t kPowerThermal =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace clock_reason

// A sample is throttled when its SM clock is under 90 % of the maximum (when the maximum is
// known, > 0) or when a power or thermal reason held the clocks.
constexpr double kThrottleClockFraction = 0.9;
bool is_throttled(const GpuSample& s, double max_sm_clock_mhz);

class Telemetry {
 public:
  // pci_bus_id: the GPU as cudaDeviceGetPCIBusId names it ("0000:3B:00.0"). Never throws.
  explicit Telemetry(const std::string& pci_bus_id);
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  bool available() const { return available_; }
  const std::string& reason() const { return reason_; }  // why not available
  std::string driver_version() const;                    // "" when unknown
  double max_sm_clock_mhz() const { return max_sm_clock_mhz_; }

  // The GPU's state now; nullopt when NVML is unavailable or a query fails.
  std::optional<GpuSample> sample() const;

 private:
  struct Api;
  std::unique_ptr<Api> api_;
  bool available_ = false;
  std::string reason_;
  double max_sm_clock_mhz_ = 0;
};

}  // namespace distancies
