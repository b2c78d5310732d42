// Runs a registered batch pipeline over many queries at once, timing each step with CUDA events
// (docs/methodology.md, docs/batch.md). Results equal the one-query `fused` pipeline's, query by
// query: the re-rank is fp32 with the same arithmetic, and what it cannot certify is redone.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/embeddings/gpu_search.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {

struct ScanShape;  // variants/embeddings/batch_scans.hpp

struct BatchScanArgs;  // variants/embeddings/batch_scan.hpp

// Parsed queries packed for a batch search (batch x dim floats and their norms), and the k each
// must ask for so that k results survive dropping its own words; then those words dropped.
struct PackedQueries {
  std::vector<float> vectors, norms;
  int k = 1;
  int batch() const { return static_cast<int>(norms.size()); }
};
PackedQueries pack_queries(const std::vector<Query>& qs, int dim, int k, bool keep_query_words, std::int64_t rows);
void finish_queries(std::vector<std::vector<Hit>>& out, const std::vector<Query>& qs, int k, bool keep_query_words);

class BatchSearcher {
 public:
  struct Options {
    int tile_rows = 0;              // model rows per GEMM tile (0: BatchPolicy's choice)
    std::size_t scratch_limit = 0;  // bytes of scratch a sub-batch may take (0: what the GPU has)
    bool gemm_only = false;         // benchmark breakdown: GEMM tiles without the selection (no results)
    // A filtered scan answers the queries its K candidates leave uncertified from all it appended
    // before the fallback (docs/batch.md, "The wide re-rank"); DISTANCIES_WIDE_RERANK=off clears it.
    bool wide_rerank = true;
    // Diagnostics: keep each query's certificate operands and candidate count (last_trace());
    // DISTANCIES_BATCH_TRACE=on sets it. Costs a copy a pass.
    bool trace = false;
  };
  // One query's certificate (kernels/common/ranking.hpp, certifies): certified when kth_exact >
  // last_key + bound or all_rows_seen; candidates: what a filtered scan appended (-1: no count).
  struct CertificateTrace {
    float kth_exact = 0, last_key = 0, bound = 0;
    bool all_rows_seen = false;
    long long candidates = -1;
    // The re-rank's: 0 certified, 1 not (redone), < 0 answered by the wide re-rank: -2 by its
    // first stage (a query's best 256 candidates), -1 from all of them.
    int status = 0;
  };
  // The searcher prepares the copies its pipelines read and keeps them with `model`.
  BatchSearcher(DeviceModel& model, Options opt);
  explicit BatchSearcher(DeviceModel& model) : BatchSearcher(model, Options{}) {}
  ~BatchSearcher();
  BatchSearcher(const BatchSearcher&) = delete;
  BatchSearcher& operator=(const BatchSearcher&) = delete;

  // The best k rows for each of `batch` queries (packed batch x dim floats, norms from
  // vector_norm). Out of GPU memory, the batch is split in halves until it fits.
  std::vector<std::vector<Hit>> search(const BatchPipeline& p, const float* queries, const float* norms, int batch,
                                       int k, Breakdown* bd = nullptr);

  // search() for parsed queries: each asks for k plus its own words, which are then dropped
  // unless kept.
  std::vector<std::vector<Hit>> search(const BatchPipeline& p, const std::vector<Query>& qs, int k,
                                       bool keep_query_words, Breakdown* bd = nullptr);

  // The next searches read their queries (batch x dim floats) and norms from device memory
  // that is already there, not uploaded per search: a streamed model's chunks are each searched
  // with the same batch, whose upload would otherwise queue behind the next chunk's copy on the
  // host-to-device engine. The host copies passed to search() must be the same queries (the
  // fallback reads them). nullptr: upload as usual.
  void set_device_queries(const float* queries, const float* norms) {
    dev_queries_ = queries;
    dev_norms_ = norms;
  }

  int last_sub_batch() const { return sub_batch_; }  // queries per GPU pass in the last search
  int last_fallbacks() const { return fallbacks_; }  // queries the last search had to redo
  // Host milliseconds the constructor spent starting cuBLAS (batch_gemm_warm_up), so that no
  // batch's timing holds the library's one-time loading.
  double startup_ms() const { return startup_ms_; }
  int last_refused() const { return refused_; }  // of those, refused by the range guard or an unusable copy
  // Queries of the last search the wide re-rank answered from their candidates (not redone).
  int last_widened() const { return widened_; }
  // The last search's certificates, query by query (Options::trace; empty without it or for the
  // per-query pipelines).
  const std::vector<CertificateTrace>& last_trace() const { return trace_; }
  // Host milliseconds of the last search outside its GPU events (Breakdown::wall_ms less
  // total_ms): what a peer timed by the host clock pays too (docs/methodology.md).
  struct HostTimes {
    double setup_ms = 0;    // before the first pass: norms, copies, refusals, scratch
    double staging_ms = 0;  // the queries copied into the page-locked staging
    double answers_ms = 0;  // each query's answer list built from the downloaded results
  };
  const HostTimes& last_host() const { return host_; }

 private:
  struct Buffers;
  struct Staging;
  // The model copies a pass reads (model_copies.hpp), prepared before it.
  struct Copies {
    const ReducedCopy* input = nullptr;        // the GEMM input's 16-bit copy (null: the fp32 rows)
    const ModelCopyRow* scan_copy = nullptr;   // the scan's own copy, as prepared
    const ModelCentre* centre = nullptr;       // the centre, where the pass reads centred copies
    const ModelCentre* scan_centre = nullptr;  // ... and where the scan's copy is one of them
  };
  ScanShape scan_shape(const BatchPipeline& p, int n, int kk, int tile) const;
  // The named steps of run_tiles(), in order (batch_search.cu).
  Copies prepare_copies(const BatchPipeline& p);
  std::optional<Refusal> batch_refusal(const BatchPipeline& p, const Copies& copies, int kk) const;
  void ensure_pass(const BatchPipeline& p, int n, int kk, int tile);
  Staging stage_pass(const float* queries, const float* norms, int first, int n, int kk);
  BatchScanArgs scan_args(const BatchPipeline& p, const Copies& copies, int first, int n, int kk, int tile,
                          float bound) const;
  void run_pass(const BatchScanArgs& a, const Staging& h, Breakdown* bd);
  void take_answers(const Staging& h, int first, int n, int kk, const std::vector<char>& refused,
                    std::vector<std::vector<Hit>>& out, std::vector<int>& uncertified);
  void keep_trace(const BatchScanArgs& a, const Staging& h);  // Options::trace: the pass's certificates
  std::vector<std::vector<Hit>> run_tiles(const BatchPipeline& p, const float* queries, const float* norms, int batch,
                                          int k, Breakdown* bd);
  std::vector<std::vector<Hit>> run_per_query(const Pipeline& p, const float* queries, const float* norms, int batch,
                                              int k, Breakdown* bd);
  std::vector<std::vector<Hit>> run_fallback(const BatchPipeline& p, const float* queries, const float* norms,
                                             const std::vector<int>& which, int k, Breakdown* bd);

  DeviceModel& model_;
  Options opt_;
  Stream stream_, side_;
  std::unique_ptr<Buffers> buf_;      // scratch, staging, events and the cuBLAS handle
  std::unique_ptr<GpuSearcher> one_;  // per-query pipelines and last-resort fallback
  struct Fit {                        // the largest sub-batch that fitted for this pipeline, k and tile
    const BatchPipeline* pipeline = nullptr;
    int k = 0, tile = 0, batch = 0;
  } fit_;
  const float* dev_queries_ = nullptr;
  const float* dev_norms_ = nullptr;
  double startup_ms_ = 0;
  int sub_batch_ = 0;
  int fallbacks_ = 0;
  int refused_ = 0;
  int widened_ = 0;
  std::vector<CertificateTrace> trace_;
  HostTimes host_;
};

}  // namespace distancies
