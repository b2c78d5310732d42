// The batch scans as registered rows. A scan is everything between the queries' normalisation and
// the exact re-rank: its limits, its scratch, the model copy it reads, its launch and what its
// keys mean to the certificate. The searcher (harness/embeddings/batch_search.cu) calls a row's functions and
// never names a scan; adding one is a kernel file and a row here (docs/architecture.md).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "runtime/device_model.hpp"
#include "runtime/error.hpp"
#include "variants/embeddings/batch_scan.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/registry.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

// What a pass's scratch depends on.
struct ScanShape {
  GemmInput input = GemmInput::F32;
  Storage scores = Storage::F32;
  int batch = 0, dim = 0, ld = 0, k = 0, K = 0, tile_rows = 0;
  long long rows = 0;
};

// One buffer of a scan's own scratch: what it holds (the out-of-memory line names it) and its size.
struct ScanBuffer {
  const char* what;
  std::size_t bytes;
};

// Where a scan launches: the searcher's cuBLAS handle, its stream, the side stream the tile
// selection runs on, and the events that order them.
struct ScanStreams {
  cublasHandle_t cublas;
  cudaStream_t stream;
  cudaStream_t side;
  TileEvents events;
};

struct BatchScanRow {
  const char* name;
  const char* description;
  const char* origin;
  // Why it cannot run a model of `dim` columns with K candidates a query on a device of compute
  // capability `cc_major` (0: not known, not checked); null: it runs every shape.
  std::optional<Refusal> (*refusal)(int dim, int K, int cc_major) = nullptr;
  // Lists a query it leaves for the re-rank.
  int (*slices)(int batch, int tile_rows, int dim, int K) = nullptr;
  // Its scratch beyond the searcher's (queries, lists, results), and where each buffer goes in the
  // arguments (`scratch` in the order scratch() gave; at least that large); null: none.
  std::vector<ScanBuffer> (*scratch)(const ScanShape&) = nullptr;
  void (*bind)(const ScanShape&, void* const* scratch, BatchScanArgs&) = nullptr;
  // The model copy it reads beyond the GEMM input's (a model_copies() row, prepared by the searcher
  // before the pass: the centred form where the scan filters and the model is centred), and how it
  // goes into the arguments (`centre`: the centre the prepared copy is centred on, null where it is
  // the plain copy); null: none.
  const char* copy = nullptr;
  void (*attach_copy)(const DeviceModel&, const ModelCopyRow& prepared, const ModelCentre* centre,
                      BatchScanArgs&) = nullptr;
  const ModelCopyRow* copy_row = nullptr;  // resolved when the table is built
  // After the queries are normalised: its own preparation (query codes, cleared lists).
  void (*prepare)(const BatchScanArgs&, cudaStream_t) = nullptr;
  // Scores every row against every query and leaves each query's lists.
  void (*score)(const ScanStreams&, const BatchScanArgs&) = nullptr;
  // The re-rank of its lists, and whatever answers the queries it leaves uncertified from the
  // pass's own candidates before the fallback (the filtered scans' wide re-rank); null:
  // batch_rerank alone.
  void (*rerank)(const BatchScanArgs&, cudaStream_t) = nullptr;

  bool gemm_tiles = false;        // a GEMM of its own over tiles: tile sizes and GEMM-only timing apply
  bool filters = false;           // drops scores below thresholds: reads the centred copies where the model is centred
  bool upper_bound_keys = false;  // its keys bound the fp32 similarity from above: the certificate adds nothing
  double element_bytes = 0;       // bytes a model element its full pass reads (0: the GEMM input's)
  int (*queries_per_read)() = nullptr;  // queries one read of the model serves (null: the whole batch)
};

// The rows, one a scan kernel file (batch_scan.cu, tensor_scan.cu, filter_scan.cu).
BatchScanRow gemm_tiles_scan();
BatchScanRow fused_tensor_core_scan();
BatchScanRow filtered_mma_scan();
BatchScanRow filtered_i8_scan();

const Table<BatchScanRow>& batch_scans();
// An unknown name is an Error listing the known ones.
const BatchScanRow& batch_scan(std::string_view name);
// Adds a row after the built-in ones (a test's trivial scan, a plug-in).
const BatchScanRow& add_batch_scan(BatchScanRow row);

// Bytes a model element the full pass of `p` reads: its scan's, else its GEMM input's copy (a
// per-query pipeline: its one-query pipeline's copy). The fixtures' least bytes.
double read_element_bytes(const BatchPipeline& p);

// The row's refusal, or empty where it has none.
std::optional<Refusal> batch_scan_refusal(const BatchScanRow& scan, int dim, int K, int cc_major);

}  // namespace distancies
