// Batched search, host side: the tuning policy and the three steps (prepare the queries, score
// every tile and keep each query's best K, re-rank exactly). Device code: kernels/embeddings/batch_select.cuh.
// The scans themselves are registered rows (batch_scans.hpp); the harness (harness/embeddings/batch_search.cu)
// owns the buffers, streams and timing.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <optional>
#include <string>

#include "kernels/embeddings/dot_args.cuh"
#include "kernels/embeddings/storage.hpp"
#include "kernels/embeddings/tiled_i8.cuh"
#include "runtime/error.hpp"
#include "variants/embeddings/policy.hpp"

namespace distancies {

// Tuning policy, in one place (docs/batch.md says why these numbers).
struct BatchPolicy {
  static constexpr int kSelectWarps = policy::Active::Batch::kSelectWarps;
  static constexpr int kRerankWarps = policy::Active::Batch::kRerankWarps;
  static constexpr int kMaxK = 128;  // candidates a query can keep (WarpTopk's limit)
  // Model rows scored per GEMM (a multiple of 128).
  static int tile_rows(int batch);
  // Lists per query, so that B x slices warps keep the GPU's memory system busy at small B.
  static int slices(int batch, int tile_rows);
  // Approximate candidates per query: margin over k for the bound to certify.
  static int candidates(int k);
};

struct BatchScanRow;

// Everything one batch pass reads and writes on the GPU (sizes: batch_workspace_bytes()). The
// searcher fills the pass, the model, the queries and the results; each part below it belongs to
// the scans that read it, and a scan's row binds it (BatchScanRow::bind, attach_copy).
struct BatchScanArgs {
  // The pass: its scan (batch_scans.hpp) and shape, K candidates a query in `slices` lists.
  const BatchScanRow* scan = nullptr;
  int batch = 0;
  int k = 0;
  int K = 0;
  int tile_rows = 0;
  int slices = 1;
  float error_bound = 0;   // of the scan's keys (certificate_bound)
  bool gemm_only = false;  // benchmark breakdown: skip the per-tile selection
  bool widen = true;       // the filtered scans' wide re-rank of uncertified queries (BatchScanRow::rerank)
  // The model: the GEMM input's copy (rows x ldg elements of `input`), the exact fp32 rows for the
  // re-rank (vectors, norms, rows, dim, ld; the query fields unused) and 1 / |x| per row.
  GemmInput input = GemmInput::F32;
  const void* model = nullptr;
  int ldg = 0;
  DotArgs exact{};
  const float* inv_norms = nullptr;
  // The queries: batch x dim as uploaded, their norms, and normalised in the GEMM input type
  // (batch x ldg).
  const float* queries = nullptr;
  const float* query_norms = nullptr;
  void* queries_g = nullptr;
  // The lists the scan leaves (batch x slices x K), and the re-rank's results (batch x k) and
  // status (batch; 1 where not certified).
  float* lists_s = nullptr;
  int* lists_r = nullptr;
  float* out_s = nullptr;
  int* out_r = nullptr;
  int* status = nullptr;
  // Diagnostics (null: off; BatchSearcher::Options::trace): per query the certificate's operands
  // (4 floats: k-th exact, last key, bound, all rows seen) and the filtered scans' candidate count.
  float* trace = nullptr;
  unsigned* trace_counts = nullptr;

  // The cuBLAS tiles' (gemm_tiles): two buffers of batch x tile_rows scores.
  struct TileScores {
    Storage type = Storage::F32;  // F32 or F16
    void* buffers[2] = {nullptr, nullptr};
  } scores;
  // The scans that share a threshold a query across blocks (fused_tensor_core, filtered_*): its key.
  unsigned* thresholds = nullptr;
  // The filtered scans' candidate buffers: filter_scan_queries x capacity entries, and their fill.
  struct Candidates {
    unsigned long long* entries = nullptr;
    unsigned* counts = nullptr;
    long long capacity = 0;
  } candidates;
  // The int8 walk's (filtered_i8): the model's tiled int8 copy, and this pass's int8 queries
  // (batch x ldg codes, batch bounds: its preparation fills them); fp32_bound: the distance of the
  // re-rank's fp32 similarity from the normalised query's dot product over |x|.
  struct I8Copy {
    const void* codes = nullptr;  // rows x ldg int8, rows sorted
    const int* order = nullptr;
    const float4* tiles = nullptr;
    int ldg = 0;
    void* queries = nullptr;
    float4* query_bounds = nullptr;
    unsigned* seg_counts = nullptr;  // filter_scan_queries x tiled_i8::kMaxSegments
    float fp32_bound = 0;
    TiledI8Projection projection;  // the projected copy's: the queries are coded against it
  } i8;
  // The centred copies' (kernels/embeddings/centre.cuh), where the filtered scans read them: the
  // model's mean row (null: the plain copies), and each query's shift q . mu / |q| (batch floats,
  // batch_prepare fills them), which the re-rank adds to a key before the certificate compares.
  struct Centring {
    const float* mean = nullptr;
    float* shifts = nullptr;
  } centring;
};

// Bytes of device scratch a batch needs (everything in BatchScanArgs but the model): the
// searcher's buffers and the scan's own (null: the cuBLAS tiles).
std::size_t batch_workspace_bytes(GemmInput g, Storage scores, int batch, int dim, int ld, int k, int tile_rows,
                                  const BatchScanRow* scan = nullptr, long long rows = 0);

// Normalises the queries into the GEMM type (and their centring shifts), then the scan's own preparation.
void batch_prepare(const BatchScanArgs& a, cudaStream_t s);
// Every list cleared to sentinels: the preparation of a scan that merges into its lists.
void clear_batch_lists(const BatchScanArgs& a, cudaStream_t s);

// The fused tensor-core scan (variants/embeddings/tensor_scan.cu): why it cannot run a model of
// this dimension with K candidates a query (its queries, lists and two tiles must fit in a
// block's shared memory), or empty.
std::optional<Refusal> tensor_scan_refusal(int dim, int K);
// The most queries one launch of the fused scan holds (a larger batch reads the model again).
int tensor_scan_max_queries();
// Blocks (= lists per query) of the fused scan on this GPU for such a batch: 1 or 2 per SM.
int tensor_scan_blocks(int batch, int dim, int K);
// Whether the fused scan seeds its shared thresholds from a first pass over a sample of the
// model (one tile a block): where the model is at least TensorScan::kSeedSamples samples long.
bool tensor_scan_seeds(int batch, int dim, int K, long long rows);

// The filtered mma scan (variants/embeddings/filter_scan.cu): why it cannot run a model of this
// dimension (the queries' fragments must fit in shared memory), or empty.
std::optional<Refusal> filter_scan_refusal(int dim);
// Why its int8 last pass cannot run a model of this dimension on a device of compute capability
// major cc_major (0: not known, not checked), or empty; and the int8 codes' leading dimension.
std::optional<Refusal> filter_scan_i8_refusal(int dim, int cc_major);
int filter_scan_i8_ldg(int dim);
// Whether it seeds the thresholds from a sample of about sqrt(K x rows) rows.
bool filter_scan_seeds(long long rows, int K);
// Candidate entries a query's buffer holds; the most queries one launch serves (a larger batch
// reads the model again), and so the queries of a batch whose buffers exist at once.
long long filter_scan_capacity(long long rows, int K);
// The int8 scan's (its buffers come in a segment a block part): filter_scan_capacity and a 64-row
// tile a part more.
long long filter_scan_i8_capacity(long long rows, int K);
int filter_scan_max_queries();
// The candidates from which an uncertified query goes to the wide re-rank's first stage.
unsigned wide_first_from();
// The walk the filter pass takes for `batch` queries of a `dim`-dimensional model on this device
// ("gemm", "shared", "rows" or "chunks"; DISTANCIES_FILTER_WALK heeded where it can run).
std::string filter_scan_walk(int batch, int dim);
int filter_scan_queries(int batch);

// cuBLAS loads its kernels and builds its state at its first call of each kind, tens of
// milliseconds once per process: one tiny GEMM of every kind the tile pipelines issue (fp32,
// TF32, bf16 and fp16 inputs; fp32 and fp16 scores) on `s`, so that start-up is paid before any
// batch is timed. `scratch`: kBatchWarmUpBytes of device memory.
constexpr std::size_t kBatchWarmUpBytes = 64 * 1024;
void batch_gemm_warm_up(cublasHandle_t h, cudaStream_t s, void* scratch);

// The math mode of a handle that computes tiles: batch_f16_h's bound counts one fp16 rounding of
// the fp32-accumulated result, so cuBLAS reductions in reduced precision (split-K partial sums
// kept in fp16) are forbidden and the library guarantees it rather than us only observing it.
void set_batch_math_mode(cublasHandle_t h);

// One tile's scores, as the cuBLAS tiles compute them: scores (m x batch, column-major, ld
// `ldc`, fp16 where `half_scores`, else fp32) = tile^T (m rows of `ldg` elements) x queries (ldg
// x batch), on the handle's stream. Every one of the m x batch scores is written (a test holds
// cuBLAS to it, since compute-sanitizer's initcheck does not see some of its kernels' stores).
void gemm_tile_scores(cublasHandle_t h, GemmInput input, const void* tile, int m, int ldg, const void* queries,
                      int batch, void* scores, bool half_scores, int ldc);

// The cuBLAS tiles' events: GEMM on the stream, selection on the side stream, two score buffers in
// flight; the scan returns with the stream waiting for the last selection.
struct TileEvents {
  cudaEvent_t scored[2];
  cudaEvent_t selected[2];
};
// The scan of `a` (a.scan) on `s` (and `side`): every query's lists for batch_rerank. A scan
// without a GEMM of its own does nothing under gemm_only.
void batch_score_tiles(cublasHandle_t h, const BatchScanArgs& a, cudaStream_t s, cudaStream_t side,
                       const TileEvents& ev);

// 1 / |x| per row (zero rows: 0), once per model.
void launch_inverse_norms(const float* norms, long long rows, float* inv, cudaStream_t s);

// The int8 walk's queries (kernels/embeddings/tiled_i8.cuh): batch x ldg codes of each query
// normalised as batch_prepare does (projected where p.extra > 0), and per query s_q, A_q, B_q
// (device pointers).
void tiled_i8_queries(const float* queries, const float* norms, int batch, int dim, int ldg, const TiledI8Projection& p,
                      void* codes, float4* bounds, cudaStream_t s);

// What the certificate adds to the last candidate's key (the error bound, 0 for upper-bound keys).
float certificate_bound(const BatchScanArgs& a);
// The queries' shifts the certificate adds back to a key of the centred rows (null: not centred).
const float* certificate_shifts(const BatchScanArgs& a);

// Merges each query's lists and re-ranks the K candidates in fp32; sets status where the
// bound cannot certify the top k.
void batch_rerank(const BatchScanArgs& a, cudaStream_t s);

}  // namespace distancies
