// The embeddings study's registry: every DotProduct variant, top-k stage, pipeline and batch
// pipeline is a row of a typed table (variants/registry_model.hpp) with a name, a one-line
// description and where it comes from. Tests, benchmark fixtures, `distancies list`, JSON and
// tables iterate these tables; adding a variant is one kernel file plus one row.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/embeddings/dot_args.cuh"
#include "kernels/embeddings/storage.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

using registry::Table;

struct DotVariant {
  const char* name;
  const char* description;
  const char* origin;  // study version it comes from ("V4"), "study, discarded", or "beyond the study"
  int threads_per_row;
  void (*launch)(const DotArgs&, cudaStream_t);
};

// The candidates every top-k stage works on: `n` of them in (sims, idx), buffers of `capacity`
// entries, the stage scratch and the certificate flag.
struct CandidateBuffers {
  int n = 0;
  int k = 0;
  std::size_t capacity = 0;  // >= max(n, chunks * k)
  float* sims = nullptr;     // current candidates
  int* idx = nullptr;
  float* alt_sims = nullptr;  // ping-pong partner, same capacity
  int* alt_idx = nullptr;
  int chunks = 0;        // sorted k-chunks at the front of sims (0: unsorted)
  void* temp = nullptr;  // stage scratch (CUB, candidate lists)
  std::size_t temp_bytes = 0;
  int* status = nullptr;  // device flag: a stage sets 1 when its result is not certified exact;
                          // the pipeline's first stage that can set it clears it (no memset per query)
};

// What a stage that reads the model gets (TopkStage::reads_model): the fp32 model and query,
// and the reduced copy with its error bound when the pipeline uses one.
struct ModelInputs {
  const DotArgs* dot = nullptr;
  const void* reduced = nullptr;  // reduced-precision copy of the vectors (rows x reduced_ld)
  Storage storage = Storage::F32;
  int reduced_ld = 0;
  float error_bound = 0;             // max |reduced-precision similarity - fp32 similarity| (docs/variants.md);
                                     // I8: the global part, the per-row part is in the scan's keys
  const float* row_scale = nullptr;  // I8: s_i per row
  float row_bound_factor = 0;        // I8: >= |q|_1 / (2 |q|), the per-row bound is s_i * it / n_i
  float shift = 0;  // the centred 16-bit copy (kernels/embeddings/centre.cuh): q . mu / |q|, added to the keys' last
  // I8, centred: c_i = mu . (y_i - s_i codes_i) per row and the weight w of the query's mean part:
  // the scan adds w c_i to each row's dot, so its per-row bound meets only q - w mu.
  const float* row_correction = nullptr;
  float correction_weight = 0;
};

// A stage's whole input. `model` is left empty for stages that do not declare reads_model
// (GpuSearcher hands them none), so an undeclared read fails the stage's own check.
struct TopkState : CandidateBuffers {
  ModelInputs model;
};

// What a stage reads and what it leaves: the tables are checked so that every stage's input is
// what the stage (or dot variant) before it leaves, and a pipeline ends with the top k.
enum class StageData {
  Model,           // reads the model itself (a scan); nothing before it
  Similarities,    // one similarity per row in state.sims/idx (a dot variant's output)
  SortedChunks,    // sorted k-chunks at the front of state.sims/idx
  CandidateLists,  // per-block candidate lists in the stage scratch (approximate scores)
  TopK,            // the best k first in state.sims/idx: a pipeline's answer
};
const char* stage_data_name(StageData d);

struct TopkStage {
  using Run = void (*)(TopkState&, cudaStream_t);
  using Scratch = std::size_t (*)(int n, int k);
  const char* name = nullptr;
  const char* description = nullptr;
  const char* origin = nullptr;
  StageData input = StageData::Similarities;
  StageData output = StageData::TopK;
  const char* after = nullptr;   // the stage that makes its input (checked); none when it needs none
  Scratch temp_bytes = nullptr;  // scratch it needs
  Run run = nullptr;             // reads `input`, leaves `output`
  bool reads_model = false;      // reads the model: a scan, or a re-rank of candidate rows
                                 // (gets TopkState::model)

  // A row is its name, description and origin, then the rest by name:
  // TopkStage{...}.takes(StageData::Similarities).leaves(StageData::TopK).launched_by(run, scratch).
  TopkStage takes(StageData d) const { return registry::with_field(*this, &TopkStage::input, d); }
  TopkStage leaves(StageData d) const { return registry::with_field(*this, &TopkStage::output, d); }
  TopkStage follows(const char* stage) const { return registry::with_field(*this, &TopkStage::after, stage); }
  TopkStage launched_by(Run fn, Scratch scratch) const {
    return registry::with_field(registry::with_field(*this, &TopkStage::run, fn), &TopkStage::temp_bytes, scratch);
  }
  TopkStage reading_the_model() const { return registry::with_field(*this, &TopkStage::reads_model, true); }
};

// How a pipeline treats memory, the study's versions' habits by name (no positional bools).
struct MemoryHabits {
  enum Flag : unsigned {
    kCopyModelEveryQuery = 1,  // V1: pageable host->device copy of the whole model per query
    kScratchPerQuery = 2,      // cudaMalloc/cudaFree the workspace on every query
    kSyncEachStage = 4,        // synchronise after every stage
    kPinnedHost = 8,           // query/result through page-locked host buffers
  };
  bool copy_model_every_query = false;
  bool scratch_per_query = false;
  bool sync_each_stage = false;
  bool pinned_host = false;
  constexpr MemoryHabits() = default;
  constexpr explicit MemoryHabits(unsigned f)
      : copy_model_every_query(f & kCopyModelEveryQuery),
        scratch_per_query(f & kScratchPerQuery),
        sync_each_stage(f & kSyncEachStage),
        pinned_host(f & kPinnedHost) {}
  std::string describe() const;  // "pinned, scratch per query", or "resident"
};

struct Pipeline {
  const char* name = nullptr;
  const char* description = nullptr;
  const char* origin = nullptr;
  const char* dot = nullptr;        // a dot_variants() name; none when a stage scans the model
  std::vector<const char*> topk{};  // topk_stages() names, run in order
  MemoryHabits habits{};
  Storage storage = Storage::F32;  // which copy of the vectors its stages read
  const char* fallback = nullptr;  // pipeline to rerun when a stage cannot certify its result

  bool study_sequence = false;  // one of the study's versions V1-V4, which `sequence/` replays in order

  // Resolved when the table is built (names checked by registry::check_all()).
  const DotVariant* dot_variant = nullptr;
  std::vector<const TopkStage*> stages{};
  const Pipeline* fallback_pipeline = nullptr;

  // A row is its name, description and origin, then the rest by name:
  // Pipeline{...}.scored_by("warp_shuffle_dot").ranked_by({"first_merge"}).with_habits(...).
  Pipeline scored_by(const char* dot_name) const { return registry::with_field(*this, &Pipeline::dot, dot_name); }
  Pipeline ranked_by(std::vector<const char*> stage_names) const {
    return registry::with_field(*this, &Pipeline::topk, std::move(stage_names));
  }
  Pipeline with_habits(MemoryHabits h) const { return registry::with_field(*this, &Pipeline::habits, h); }
  Pipeline reads(Storage s) const { return registry::with_field(*this, &Pipeline::storage, s); }
  Pipeline falls_back_to(const char* pipeline) const {
    return registry::with_field(*this, &Pipeline::fallback, pipeline);
  }
  Pipeline in_study_sequence() const { return registry::with_field(*this, &Pipeline::study_sequence, true); }
};

// Batched search: the tensor cores score tiles of the model against all B queries; a per-query
// top-K follows each tile; an exact fp32 re-rank certifies the top k (docs/batch.md).

struct BatchScanRow;  // variants/embeddings/batch_scans.hpp

struct BatchPipeline {
  const char* name;
  const char* description;
  const char* origin;
  GemmInput input = GemmInput::F32;
  const char* per_query = nullptr;  // instead of tiles: this one-query pipeline, once per query
  const char* fallback = nullptr;   // batch pipeline for the queries a run cannot certify;
                                    // none: each such query reruns on the exact one-query `fused`
  Storage scores = Storage::F32;    // how a tile's scores are written (F16: half the traffic)
  const char* scan = "gemm_tiles";  // the batch_scans() row that fills the lists

  // Resolved when the table is built.
  const Pipeline* per_query_pipeline = nullptr;
  const BatchPipeline* fallback_pipeline = nullptr;
  const BatchScanRow* scan_row = nullptr;

  // A row is its name, description, origin and GEMM input, then what differs from the defaults by
  // name: BatchPipeline{...}.falls_back_to("batch_sgemm").scores_as(Storage::F16).
  BatchPipeline falls_back_to(const char* pipeline) const {
    return registry::with_field(*this, &BatchPipeline::fallback, pipeline);
  }
  BatchPipeline per_query_by(const char* pipeline) const {
    return registry::with_field(*this, &BatchPipeline::per_query, pipeline);
  }
  BatchPipeline scores_as(Storage s) const { return registry::with_field(*this, &BatchPipeline::scores, s); }
  BatchPipeline scanned_by(const char* scan_name) const {
    return registry::with_field(*this, &BatchPipeline::scan, scan_name);
  }
};

// Rows that code relies on by role, not by a name looked up while it runs: each is resolved once,
// when registry::check_all() checks the tables at start-up (role_problems names a missing one).
const Pipeline& exact_pipeline();          // "fused": every certified path's last fallback
const Pipeline& f16_one_query_pipeline();  // "fused_f16": the 16-bit copy `auto` weighs for one query
const BatchPipeline& exact_batch_loop();   // "batch_fused_loop": a batch the measured table cannot price
const DotVariant& all_rows_dot();          // "float4_warp_dot": every row's similarity, where no list holds k
std::vector<std::string> role_problems();

const Table<DotVariant>& dot_variants();
const Table<TopkStage>& topk_stages();
const Table<Pipeline>& pipelines();
const Table<BatchPipeline>& batch_pipelines();

// Look-ups by name; an unknown name is an Error listing the known ones.
const DotVariant& dot_variant(std::string_view name);
const TopkStage& topk_stage(std::string_view name);
const Pipeline& pipeline(std::string_view name);
const BatchPipeline& batch_pipeline(std::string_view name);

// Adds a row after the built-in ones (a test's trivial entry, a plug-in) and resolves its
// references; registry::check_all() then reports anything that does not resolve.
const DotVariant& add_dot_variant(DotVariant v);
const TopkStage& add_topk_stage(TopkStage s);
const Pipeline& add_pipeline(Pipeline p);
const BatchPipeline& add_batch_pipeline(BatchPipeline p);

// Problems in rows given explicitly (the registry's check uses the global tables; tests pass
// their own to show a bad row is caught).
std::vector<std::string> pipeline_problems(const Pipeline& p, const Table<DotVariant>& dots,
                                           const Table<TopkStage>& stages, const Table<Pipeline>& all);
std::vector<std::string> stage_problems(const TopkStage& s, const Table<TopkStage>& stages);

// Capacity (entries) of the candidate buffers a pipeline needs for n rows and top k.
std::size_t topk_capacity(int n, int k);

// The memory floor: reads `bytes` (a multiple of 16) once; writes partial sums to sink
// (floor_sink_len() floats).
void launch_read_floor(const void* data, std::size_t bytes, float* sink, cudaStream_t s);
int floor_sink_len();

}  // namespace distancies
