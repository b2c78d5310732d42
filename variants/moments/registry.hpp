// The column-moments variants (docs/moments.md): name, description, origin, what they need,
// and a host launch. Tests, fixtures and the `moments` command iterate this table.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include "kernels/moments/moments_args.cuh"
#include "runtime/device.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

enum class MatrixLayout { RowMajor, ColumnMajor };
enum class Accumulation { F32, F64 };

const char* layout_name(MatrixLayout l);
const char* accumulation_name(Accumulation a);

// Scratch a launch needs (block partials, means); grows on demand, kept between calls, so
// timed calls after a first one allocate nothing.
class MomentsScratch {
 public:
  void* get(std::size_t bytes);

 private:
  DeviceBuffer buf_;
};

using MomentsLaunch = void (*)(const MomentsInput&, const MomentsOutput&, MomentsScratch&, cudaStream_t);

struct MomentsVariant {
  const char* name;
  const char* description;
  const char* origin;  // "study" (the seed's system) or "beyond the study"
  MatrixLayout layout;
  Accumulation accumulation;
  int passes;  // times the matrix is read
  MomentsLaunch launch;
};

const registry::Table<MomentsVariant>& moments_variants();

// Throws Error("unknown moments variant 'x' (known: ...)").
const MomentsVariant& moments_variant(std::string_view name);

// The variant the `moments` command uses unless told otherwise.
constexpr const char* kDefaultMomentsVariant = "one_pass";

}  // namespace distancies
