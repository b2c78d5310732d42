// Runs a registered pipeline for one query over the resident model, timing every stage with
// CUDA events (docs/methodology.md says what each number includes).
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/cpu_search.hpp"
#include "harness/expression.hpp"
#include "runtime/device_model.hpp"
#include "runtime/error.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {

struct StageTime {
  std::string name;  // "dot", a top-k stage name, "model_h2d", "query_h2d", "result_d2h"
  bool transfer;     // a copy (else a kernel stage)
  float ms;
};

struct Breakdown {
  std::vector<StageTime> stages;
  float total_ms = 0;  // device timeline, first event to last (includes host-side gaps)
  double wall_ms = 0;  // host clock around the whole call
  // false: only the call's first and last events (total_ms, no stages): the pipeline's time
  // without the events that time each stage (each pair adds a little to the timeline).
  bool stage_events = true;
  float kernel_ms() const;
  float transfer_ms() const;
  float overhead_ms() const { return total_ms - kernel_ms() - transfer_ms(); }
  float stage_ms(const std::string& name) const;  // summed over stages of that name
};

// Device buffers for one pipeline: similarities, indices, their ping-pong partners, stage
// scratch and the query.
struct Workspace {
  int n = 0, k = 0, dim = 0;
  std::size_t capacity = 0;
  DeviceBuffer sims, idx, alt_sims, alt_idx, temp, query, status;
  std::size_t temp_bytes = 0;

  bool fits(int n_, int k_, int dim_, std::size_t temp_) const {
    return n_ == n && dim_ <= dim && temp_ <= temp_bytes && topk_capacity(n_, k_) <= capacity;
  }
  void allocate(int n_, int k_, int dim_, std::size_t temp_);
  TopkState topk_state() const;
};

class GpuSearcher {
 public:
  struct Options {
    bool force_pageable = false;  // the study's switch: pageable host buffers even where pinned
  };
  // `host` (may be null) is needed only by pipelines that copy the model on every query.
  // The searcher prepares the copies its pipelines read (their plans name them) and keeps them
  // with `model`.
  GpuSearcher(DeviceModel& model, const Model* host, Options opt);
  GpuSearcher(DeviceModel& model, const Model* host) : GpuSearcher(model, host, Options{}) {}
  ~GpuSearcher();
  GpuSearcher(const GpuSearcher&) = delete;
  GpuSearcher& operator=(const GpuSearcher&) = delete;

  // The best k rows for the query (fewer if the model has fewer rows). Breakdown optional.
  std::vector<Hit> search(const Pipeline& p, const float* query, float query_norm, int k, Breakdown* bd = nullptr);

  // search() for a parsed query: asks for k plus its own words, then drops them unless kept.
  std::vector<Hit> search(const Pipeline& p, const Query& q, int k, bool keep_query_words, Breakdown* bd = nullptr);

  cudaStream_t stream() const { return stream_; }

  // Queries on 16-bit pipelines since construction: certified by the bound, answered by the
  // fallback because the bound could not certify, or refused (range guard, unusable copy).
  struct CertificateCounts {
    long long certified = 0, uncertified = 0, refused = 0;
  };
  const CertificateCounts& certificate_counts() const { return counts_; }

 private:
  struct Timer;
  struct Call;
  // The named steps of search(), in order (gpu_search.cu).
  void prepare_copies(Call& c);
  std::optional<Refusal> refusal(const Pipeline& p, const ReducedCopy* reduced, const float* query,
                                 float query_norm) const;
  void bind_model(Call& c, const Pipeline& p);
  void bind_buffers(Call& c);
  void upload_query(Call& c, const float* query);
  void run_stages(Call& c, const Pipeline& p, const float* query, float query_norm);
  void download_result(Call& c);
  void fill_breakdown(const Call& c, Breakdown& bd, double wall_ms) const;
  template <class F>
  void step(const Call& c, const char* name, bool transfer, F&& fn);

  DeviceModel& model_;
  const Model* host_;
  Options opt_;
  Stream stream_;
  Workspace ws_;
  std::unique_ptr<Timer> timer_;
  std::unique_ptr<PinnedBuffer> pinned_;  // query upload + result download staging
  std::size_t pinned_bytes_ = 0;
  CertificateCounts counts_;
};

// The first k (similarity, row) results a kernel wrote, sentinel rows (fewer rows than k)
// left out.
std::vector<Hit> hits_from(const float* sims, const int* rows, int k, std::int64_t model_rows);

// The k a pipeline is asked for so that k results survive dropping the query's words.
int request_k(const Query& q, int k, bool keep_query_words, std::int64_t rows);
// Then the answer to k: the query's words dropped unless kept.
std::vector<Hit> finish_query(std::vector<Hit> hits, const Query& q, int k, bool keep_query_words);

}  // namespace distancies
