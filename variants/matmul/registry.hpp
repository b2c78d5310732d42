// The tiled matrix-multiplication study's variants (docs/matmul.md): the seed's naive kernel,
// its three-loop counter-example and its two register sweeps, each a row generated from one
// template. Tests, fixtures and the report iterate this table.
#pragma once
#include <cuda_runtime.h>

#include <string_view>

#include "kernels/matmul/matmul_args.cuh"
#include "variants/registry_model.hpp"

namespace distancies {

enum class MatmulKind { Naive, ThreeLoop, RegisterTile, RegisterLength };
const char* matmul_kind_name(MatmulKind k);

struct MatmulVariant {
  const char* name;
  const char* description;
  const char* origin;       // "study" or "beyond the study"
  MatmulKind kind;
  int tile_y, tile_x;       // elements of C a thread computes
  int length;               // steps of K held in registers at once (register_length), else 1
  void (*launch)(const MatmulArgs&, cudaStream_t);
  const void* kernel;       // for cudaFuncGetAttributes / the occupancy calculator
  int inputs_in_registers() const { return length * (tile_x + tile_y); }
};

// What the compiler gave a variant's kernel and what it leaves on an SM (docs/matmul.md).
struct MatmulResources {
  int registers = 0;            // per thread
  int local_bytes = 0;          // per thread: spills (and local arrays)
  int static_shared_bytes = 0;  // per block
  int blocks_per_sm = 0;        // resident blocks of 256 threads
  double occupancy = 0;         // resident warps / the SM's maximum
};
MatmulResources matmul_resources(const MatmulVariant& v);

const registry::Table<MatmulVariant>& matmul_variants();
const MatmulVariant& matmul_variant(std::string_view name);

}  // namespace distancies
