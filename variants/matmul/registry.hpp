// The tiled matrix-multiplication study's variants (docs/matmul.md): the seed's naive kernel,
// its three-loop counter-example and its two register sweeps (rows generated from one template
// each), then shared-memory tiling, a warp-tiled SGEMM, its tuned configurations and the FP16
// tensor-core kernels. Tests,
// fixtures and the report iterate this table.
#pragma once
#include <cuda_runtime.h>

#include <optional>
#include <string_view>

#include "kernels/matmul/matmul_args.cuh"
#include "runtime/error.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

enum class MatmulKind {
  Naive,
  ThreeLoop,
  RegisterTile,
  RegisterLength,
  SharedTile,
  WarpTile,
  TunedWarpTile,  // tuned_sgemm_*: the templated SIMT SGEMM's configurations
  TensorCore,
  Warpgroup
};
const char* matmul_kind_name(MatmulKind k);

struct MatmulVariant {
  const char* name;
  const char* description;
  const char* origin;  // "study" or "beyond the study"
  MatmulKind kind;
  int tile_y, tile_x;  // elements of C a thread computes
  int length;          // steps of K held in registers at once (register_length), else 1
  void (*launch)(const MatmulArgs&, cudaStream_t);
  const void* kernel;  // for cudaFuncGetAttributes / the occupancy calculator
  // F16 rows read MatmulArgs::a16 / b16 (the harness makes them, untimed) and are held to the
  // FP16 bound; their launch refuses args without them.
  MatmulPrecision precision = MatmulPrecision::F32;
  int threads = kMatmulBlockSide * kMatmulBlockSide;  // a block
  int dynamic_shared_bytes = 0;                       // a block
  // sm_90a code (wgmma, setmaxnreg): runs on compute capability 9.0 alone; elsewhere its launch
  // refuses, and tests and fixtures skip the row saying why (matmul_variant_refusal).
  bool needs_sm90a = false;
  int inputs_in_registers() const { return length * (tile_x + tile_y); }
};

// What the compiler gave a variant's kernel and what it leaves on an SM (docs/matmul.md).
struct MatmulResources {
  int registers = 0;             // per thread
  int local_bytes = 0;           // per thread: spills (and local arrays)
  int static_shared_bytes = 0;   // per block
  int dynamic_shared_bytes = 0;  // per block
  int blocks_per_sm = 0;         // resident blocks of the variant's threads
  double occupancy = 0;          // resident warps / the SM's maximum
};
MatmulResources matmul_resources(const MatmulVariant& v);

const registry::Table<MatmulVariant>& matmul_variants();
const MatmulVariant& matmul_variant(std::string_view name);
// Why a row cannot run on the current device (empty: it can).
std::optional<Refusal> matmul_variant_refusal(const MatmulVariant& v);

}  // namespace distancies
