// What every fixture shares: the resident model, a host copy for V1 and the CPU, the query,
// and the memory floor measured once at start-up.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "harness/expression.hpp"
#include "kernels/embeddings/storage.hpp"
#include "runtime/device_model.hpp"
#include "runtime/model.hpp"

namespace distancies::bench {

struct BenchConfig {
  std::string model_path;  // empty: synthetic
  long long rows = 2196016;
  int dim = 300;
  unsigned long long seed = 840;
  std::string family = "iid";  // the synthetic model's data family (docs/data.md)
  std::string query = "king";
  int k = 10;
  bool host_copy = true;      // V1 and the CPU fixtures need it
  long long stream_rows = 0;  // > 0: stream/* fixtures over a synthetic model of this many rows in host memory
  long long shard_rows =
      0;  // > 0: shard/* fixtures over a synthetic model of this many rows, each rank making its shard
};

struct BenchState {
  BenchConfig config;
  std::string source;  // "synthetic seed 840" or the file path
  DataFamily family;   // the synthetic model's (iid for a model file)
  Model host;          // words always; vectors when config.host_copy
  bool host_vectors = false;
  std::unique_ptr<DeviceModel> device;  // null without a GPU
  Query query;
  std::vector<std::pair<std::string, Query>> sequence;  // the study's Table 1 queries
  float floor_ms = 0;                                   // median over repeated reads of the fp32 model
  float floor_half_ms = 0;                              // the same for its 16-bit copy (half the bytes)
  float floor_i8_ms = 0;                                // the same for its int8 copy (a quarter)
  float floor_for(Storage s) const {
    return s == Storage::F32 ? floor_ms : s == Storage::I8 ? floor_i8_ms : floor_half_ms;
  }
  double model_bytes() const { return double(host.rows) * host.ld * 4; }
};

// Builds the state once (GPU generation where there is no model file); prints what it did.
BenchState& bench_state();
void init_bench_state(const BenchConfig& c);

// Median time to read `bytes` at `data` once (the floor fixture's kernel).
float measure_floor_ms(const void* data, std::size_t bytes, int reps);

}  // namespace distancies::bench
