// Batched search: policy, the steps every scan shares, and the cuBLAS tiles' scan row. The GEMM
// is cuBLAS's; selection and re-rank kernels are kernels/embeddings/batch_select.cuh.
#include <algorithm>
#include <string>

#include "kernels/embeddings/batch_select.cuh"
#include "kernels/embeddings/centre.cuh"
#include "kernels/embeddings/tiled_i8.cuh"
#include "runtime/cublas_check.hpp"
#include "runtime/env_setting.hpp"
#include "runtime/launch.hpp"
#include "variants/embeddings/batch_scans.hpp"

namespace distancies {
namespace {

constexpr int kElementThreads = 256;  // the one-thread-per-element kernels

std::size_t element_bytes(GemmInput g) { return g == GemmInput::BF16 || g == GemmInput::F16 ? 2 : 4; }

cudaDataType_t cuda_type(GemmInput g) {
  return g == GemmInput::BF16 ? CUDA_R_16BF : g == GemmInput::F16 ? CUDA_R_16F : CUDA_R_32F;
}

cublasComputeType_t compute_type(GemmInput g) {
  // PEDANTIC: no TF32 even if NVIDIA_TF32_OVERRIDE or the handle's math mode would allow it.
  return g == GemmInput::F32    ? CUBLAS_COMPUTE_32F_PEDANTIC
         : g == GemmInput::TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                : CUBLAS_COMPUTE_32F;
}

}  // namespace

int BatchPolicy::tile_rows(int batch) {
  // 128M scores per tile (131072 rows at B = 1024, 0.5 GB of fp32 scores): measured on the
  // H100, larger tiles win (fewer, fuller GEMMs, fewer list reloads) although no tile fits in
  // L2 any more (docs/batch.md has the sweep).
  const long long budget = 128ll << 20;
  return static_cast<int>(std::clamp(round_up(budget / std::max(batch, 1), 128), 1024ll, 1ll << 20));
}

int BatchPolicy::slices(int batch, int tile_rows) {
  // About 4096 selecting warps per tile, each with at least 1024 scores of a tile.
  const int want = std::max(1, 4096 / std::max(batch, 1));
  return std::clamp(want, 1, std::max(1, tile_rows / 1024));
}

// 64 or 2 k: DISTANCIES_BATCH_CANDIDATES=128 raises the floor, to measure what more re-ranked rows
// certify where the keys are close (strongly anisotropic data).
int BatchPolicy::candidates(int k) {
  static const long long floor = env_setting("DISTANCIES_BATCH_CANDIDATES", {"64", "128"}, "64") == "128" ? 128 : 64;
  return static_cast<int>(std::min<long long>(kMaxK, std::max(floor, 2ll * k)));
}

std::size_t batch_workspace_bytes(GemmInput g, Storage scores, int batch, int dim, int ld, int k, int tile_rows,
                                  const BatchScanRow* scan, long long rows) {
  static const BatchScanRow& gemm_tiles = batch_scan("gemm_tiles");  // resolved once
  const BatchScanRow& row = scan ? *scan : gemm_tiles;
  const std::size_t B = static_cast<std::size_t>(batch);
  const int ldg = g == GemmInput::F32 || g == GemmInput::TF32 ? ld : reduced_leading_dim(dim);
  const int K = BatchPolicy::candidates(k);
  const std::size_t S = static_cast<std::size_t>(row.slices(batch, tile_rows, dim, K));
  std::size_t own = 0;
  if (row.scratch)
    for (const ScanBuffer& b : row.scratch(ScanShape{g, scores, batch, dim, ld, k, K, tile_rows, rows})) own += b.bytes;
  return B * dim * 4 + B * 4                             // queries and their norms
         + B * ldg * element_bytes(g)                    // normalised queries
         + B * S * static_cast<std::size_t>(K) * 8       // candidate lists
         + B * 4                                         // the queries' centring shifts
         + own                                           // the scan's own
         + B * static_cast<std::size_t>(k) * 8 + B * 4;  // results and status
}

void batch_prepare(const BatchScanArgs& a, cudaStream_t s) {
  if (a.batch == 0) return;
  const int threads = 128;
  switch (a.input) {
    case GemmInput::F32:
    case GemmInput::TF32:
      normalize_queries_kernel<<<a.batch, threads, 0, s>>>(a.queries, a.query_norms, a.exact.dim, a.ldg,
                                                           static_cast<float*>(a.queries_g));
      break;
    case GemmInput::BF16:
      normalize_queries_kernel<<<a.batch, threads, 0, s>>>(a.queries, a.query_norms, a.exact.dim, a.ldg,
                                                           static_cast<__nv_bfloat16*>(a.queries_g));
      break;
    case GemmInput::F16:
      normalize_queries_kernel<<<a.batch, threads, 0, s>>>(a.queries, a.query_norms, a.exact.dim, a.ldg,
                                                           static_cast<__half*>(a.queries_g));
      break;
  }
  CUDA_CHECK_LAUNCH();
  if (a.centring.mean) {
    centre_shift_kernel<<<a.batch, 128, 0, s>>>(a.queries, a.query_norms, a.centring.mean, a.exact.dim,
                                                a.centring.shifts);
    CUDA_CHECK_LAUNCH();
  }
  if (a.scan->prepare) a.scan->prepare(a, s);
}

void clear_batch_lists(const BatchScanArgs& a, cudaStream_t s) {
  const long long entries = static_cast<long long>(a.batch) * a.slices * a.K;
  if (entries == 0) return;
  clear_lists_kernel<<<blocks_for(entries, kElementThreads), kElementThreads, 0, s>>>(
      SliceLists{a.lists_s, a.lists_r, a.slices, a.K}, entries);
  CUDA_CHECK_LAUNCH();
}

void batch_gemm_warm_up(cublasHandle_t h, cudaStream_t s, void* scratch) {
  constexpr int m = 128, n = 8, kk = 64;  // scores (m x n) = tile^T (m x kk) * queries (kk x n), as the tiles do
  static_assert((m * kk + kk * n + m * n) * 4 <= kBatchWarmUpBytes, "the warm-up's operands fit its scratch");
  CUDA_CHECK(cudaMemsetAsync(scratch, 0, kBatchWarmUpBytes, s));
  cublas_check(cublasSetStream(h, s), "cublasSetStream");
  char* a = static_cast<char*>(scratch);
  char* b = a + m * kk * 4;
  char* c = b + kk * n * 4;
  for (GemmInput g : {GemmInput::F32, GemmInput::TF32, GemmInput::BF16, GemmInput::F16})
    for (bool half_scores : {false, true}) {
      if (half_scores && g != GemmInput::F16) continue;  // fp16 scores come from fp16 inputs only
      gemm_tile_scores(h, g, a, m, kk, b, n, c, half_scores, m);
    }
  CUDA_CHECK(cudaStreamSynchronize(s));
}

void batch_score_tiles(cublasHandle_t h, const BatchScanArgs& a, cudaStream_t s, cudaStream_t side,
                       const TileEvents& ev) {
  if (a.gemm_only && !a.scan->gemm_tiles) return;  // no GEMM of its own: nothing to time
  a.scan->score(ScanStreams{h, s, side, ev}, a);
}

void set_batch_math_mode(cublasHandle_t h) {
  cublas_check(cublasSetMathMode(h, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                                              CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
               "cublasSetMathMode");
}

void gemm_tile_scores(cublasHandle_t h, GemmInput input, const void* tile, int m, int ldg, const void* queries,
                      int batch, void* scores, bool half_scores, int ldc) {
  const float alpha = 1.0f, beta = 0.0f;
  // Column-major view: scores (m x B, ld = ldc) = tile^T (m x ldg) * queries (ldg x B).
  cublas_check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, batch, ldg, &alpha, tile, cuda_type(input), ldg, queries,
                            cuda_type(input), ldg, &beta, scores, half_scores ? CUDA_R_16F : CUDA_R_32F, ldc,
                            compute_type(input), CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

namespace {

// The cuBLAS tiles: every tile a GEMM on the stream, its selection into the slice lists on the
// side stream, two score buffers in flight.
void score_gemm_tiles(const ScanStreams& io, const BatchScanArgs& a) {
  if (a.batch == 0 || a.exact.rows == 0) return;
  cublasHandle_t h = io.cublas;
  cudaStream_t s = io.stream, side = io.side;
  const TileEvents& ev = io.events;
  cublas_check(cublasSetStream(h, s), "cublasSetStream");
  const SliceLists lists{a.lists_s, a.lists_r, a.slices, a.K};
  constexpr int kWarps = BatchPolicy::kSelectWarps;
  const std::size_t smem = kWarps * static_cast<std::size_t>(a.K) * (sizeof(float) + sizeof(int));
  const long long warps = static_cast<long long>(a.batch) * a.slices;
  const unsigned blocks = blocks_for(warps, kWarps);  // one warp per (query, slice)
  const char* model = static_cast<const char*>(a.model);
  const std::size_t row_bytes = static_cast<std::size_t>(a.ldg) * element_bytes(a.input);
  const bool half = a.scores.type == Storage::F16;
  if (half && a.input != GemmInput::F16) throw Error("fp16 scores need fp16 GEMM inputs (cuBLAS)");
  int t = 0;
  for (int row0 = 0; row0 < a.exact.rows; row0 += a.tile_rows, ++t) {
    const int buf = t % 2;
    const int m = std::min(a.tile_rows, a.exact.rows - row0);
    if (t >= 2) CUDA_CHECK(cudaStreamWaitEvent(s, ev.selected[buf], 0));  // buffer free again
    gemm_tile_scores(h, a.input, model + row0 * row_bytes, m, a.ldg, a.queries_g, a.batch, a.scores.buffers[buf], half,
                     a.tile_rows);
    if (a.gemm_only) continue;
    CUDA_CHECK(cudaEventRecord(ev.scored[buf], s));
    CUDA_CHECK(cudaStreamWaitEvent(side, ev.scored[buf], 0));
    if (half)
      tile_select_kernel<kWarps, __half><<<blocks, kWarps * 32, smem, side>>>(
          static_cast<const __half*>(a.scores.buffers[buf]), a.tile_rows, m, row0, a.inv_norms, a.batch, lists);
    else
      tile_select_kernel<kWarps, float><<<blocks, kWarps * 32, smem, side>>>(
          static_cast<const float*>(a.scores.buffers[buf]), a.tile_rows, m, row0, a.inv_norms, a.batch, lists);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(ev.selected[buf], side));
  }
  if (!a.gemm_only && t > 0) CUDA_CHECK(cudaStreamWaitEvent(s, ev.selected[(t - 1) % 2], 0));
}

std::vector<ScanBuffer> gemm_tiles_scratch(const ScanShape& sh) {
  const std::size_t tile = static_cast<std::size_t>(sh.batch) * sh.tile_rows * (sh.scores == Storage::F32 ? 4 : 2);
  return {{"a tile of scores", tile}, {"a tile of scores", tile}};
}

}  // namespace

BatchScanRow gemm_tiles_scan() {
  BatchScanRow r{"gemm_tiles",
                 "cuBLAS GEMM over tiles of the model, each tile's scores selected per query on a side stream",
                 "beyond the study"};
  r.slices = [](int batch, int tile_rows, int, int) { return BatchPolicy::slices(batch, tile_rows); };
  r.scratch = gemm_tiles_scratch;
  r.bind = [](const ScanShape& sh, void* const* scratch, BatchScanArgs& a) {
    a.scores.type = sh.scores;
    a.scores.buffers[0] = scratch[0];
    a.scores.buffers[1] = scratch[1];
  };
  r.prepare = clear_batch_lists;
  r.score = score_gemm_tiles;
  r.gemm_tiles = true;
  return r;
}

// What the certificate adds to the last candidate's key: the keys' error bound, or nothing where
// the keys are upper bounds of the fp32 similarity already (the int8 walk's).
float certificate_bound(const BatchScanArgs& a) { return a.scan->upper_bound_keys ? 0.0f : a.error_bound; }

const float* certificate_shifts(const BatchScanArgs& a) { return a.centring.mean ? a.centring.shifts : nullptr; }

void batch_rerank(const BatchScanArgs& a, cudaStream_t s) {
  if (a.batch == 0) return;
  constexpr int kWarps = BatchPolicy::kRerankWarps;
  const std::size_t smem = batch_rerank_smem(a.exact.ld, a.K, a.k);
  allow_dynamic_smem(batch_rerank_kernel<kWarps>, smem, "batch_rerank_kernel");
  batch_rerank_kernel<kWarps><<<a.batch, kWarps * 32, smem, s>>>(
      a.exact, a.queries, a.query_norms, SliceLists{a.lists_s, a.lists_r, a.slices, a.K}, a.k, certificate_bound(a),
      a.out_s, a.out_r, a.status, certificate_shifts(a), a.trace);
  CUDA_CHECK_LAUNCH();
}

void tiled_i8_queries(const float* queries, const float* norms, int batch, int dim, int ldg, const TiledI8Projection& p,
                      void* codes, float4* bounds, cudaStream_t s) {
  if (batch == 0) return;
  tiled_i8_queries_kernel<<<batch, 128, 0, s>>>(queries, norms, dim, ldg, p, static_cast<signed char*>(codes), bounds);
  CUDA_CHECK_LAUNCH();
}

// Scores of every tile need 1 / |x| per row once per model.
void launch_inverse_norms(const float* norms, long long rows, float* inv, cudaStream_t s) {
  if (rows == 0) return;
  inverse_norms_kernel<<<blocks_for(rows, kElementThreads), kElementThreads, 0, s>>>(norms, rows, inv);
  CUDA_CHECK_LAUNCH();
}

}  // namespace distancies
