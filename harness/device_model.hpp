// The model resident on the GPU: vectors (rows x ld) and norms.
#pragma once
#include <cstdint>

#include "harness/device.hpp"
#include "harness/model.hpp"

namespace distancies {

struct DeviceModel {
  std::int64_t rows = 0;
  int dim = 0;
  int ld = 0;
  DeviceBuffer vectors;  // rows * ld floats
  DeviceBuffer norms;    // rows floats

  std::size_t vector_bytes() const { return static_cast<std::size_t>(rows) * ld * sizeof(float); }
  const float* d_vectors() const { return vectors.as<float>(); }
  const float* d_norms() const { return norms.as<float>(); }
};

// Copies a host model to the GPU. `pinned`: stage through page-locked chunks (the study's V2
// default); otherwise one pageable cudaMemcpy.
DeviceModel upload_model(const Model& m, bool pinned = true);

// Builds the synthetic model directly on the GPU (identical to make_synthetic_model()).
DeviceModel generate_synthetic_on_device(std::int64_t rows, int dim, std::uint64_t seed);

// Copies a device model back to pageable host memory (vectors and norms only, no words).
Model download_model(const DeviceModel& dm);

}  // namespace distancies
