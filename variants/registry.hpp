// The registry: every DotProduct variant, every top-k stage and every pipeline, each with a
// name, a one-line description and where it comes from. Tests, benchmark fixtures, JSON and
// tables iterate these tables; adding a variant is one kernel file plus one line here.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string_view>
#include <vector>

#include "kernels/dot_args.cuh"
#include "kernels/storage.hpp"

namespace distancies {

struct DotVariant {
  const char* name;
  const char* description;
  const char* origin;  // study version it comes from ("V4"), "study, discarded", or "beyond the study"
  int threads_per_row;
  void (*launch)(const DotArgs&, cudaStream_t);
};

// What a top-k stage works on: `n` candidates in (sims, idx), buffers of `capacity` entries.
struct TopkState {
  int n = 0;
  int k = 0;
  std::size_t capacity = 0;      // >= max(n, chunks * k)
  float* sims = nullptr;         // current candidates
  int* idx = nullptr;
  float* alt_sims = nullptr;     // ping-pong partner, same capacity
  int* alt_idx = nullptr;
  int chunks = 0;                // sorted k-chunks at the front of sims (0: unsorted)
  void* temp = nullptr;          // stage scratch (CUB, candidate lists)
  std::size_t temp_bytes = 0;
  const DotArgs* dot = nullptr;  // model and query, for stages that scan the model themselves
  const void* reduced = nullptr;  // 16-bit copy of the vectors (rows x reduced_ld), if the pipeline uses one
  Storage storage = Storage::F32;
  int reduced_ld = 0;
  float error_bound = 0;          // max |reduced-precision similarity - fp32 similarity| (docs/variants.md)
  int* status = nullptr;          // device flag: a stage sets 1 when its result is not certified exact;
                                  // the pipeline's first stage that can set it clears it (no memset per query)
};

struct TopkStage {
  const char* name;
  const char* description;
  const char* origin;
  const char* after;                        // the stage whose output it needs, or nullptr
  std::size_t (*temp_bytes)(int n, int k);  // scratch it needs
  void (*run)(TopkState&, cudaStream_t);    // leaves the best k first in state.sims/idx
  bool scans_model = false;                 // reads the model itself (needs TopkState::dot)
};

struct Pipeline {
  const char* name;
  const char* description;
  const char* origin;
  const char* dot;                      // a dot_variants() name, or nullptr when a stage scans the model
  std::vector<const char*> topk;        // topk_stages() names, run in order
  bool copy_model_every_query;          // V1: pageable host->device copy of the model per query
  bool scratch_per_query;               // cudaMalloc/cudaFree the workspace on every query
  bool sync_each_stage;                 // cudaDeviceSynchronize after every stage
  bool pinned_host;                     // query/result through page-locked host buffers
  Storage storage = Storage::F32;       // which copy of the vectors its stages read
  const char* fallback = nullptr;       // pipeline to rerun when a stage cannot certify its result
};

// Batched search: the tensor cores score tiles of the model against all B queries; a per-query
// top-K follows each tile; an exact fp32 re-rank certifies the top k (docs/batch.md).

struct BatchPipeline {
  const char* name;
  const char* description;
  const char* origin;
  GemmInput input = GemmInput::F32;
  const char* per_query = nullptr;  // instead of tiles: this one-query pipeline, once per query
  const char* fallback = nullptr;   // batch pipeline for the queries a run cannot certify;
                                    // none: each such query reruns on the exact one-query `fused`
  Storage scores = Storage::F32;    // how a tile's scores are written (F16: half the traffic)
};

const std::vector<DotVariant>& dot_variants();
const std::vector<TopkStage>& topk_stages();
const std::vector<Pipeline>& pipelines();
const std::vector<BatchPipeline>& batch_pipelines();

// Look-ups by name; an unknown name is an Error listing the known ones.
const DotVariant& dot_variant(std::string_view name);
const TopkStage& topk_stage(std::string_view name);
const Pipeline& pipeline(std::string_view name);
const BatchPipeline& batch_pipeline(std::string_view name);

// Capacity (entries) of the candidate buffers a pipeline needs for n rows and top k.
std::size_t topk_capacity(int n, int k);

// The memory floor: reads `bytes` (a multiple of 16) once; writes partial sums to sink
// (floor_sink_len() floats).
void launch_read_floor(const void* data, std::size_t bytes, float* sink, cudaStream_t s);
int floor_sink_len();

}  // namespace distancies
