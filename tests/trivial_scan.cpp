// A trivial batch scan, added here and nowhere else: every query's candidates found on the host,
// in fp64 from the fp32 rows of the trivial copy (trivial_copy.cpp), and written as one list a
// query; and a batch pipeline that uses it.
// Linked into test_registry with the registry-driven batch suites (test_batch_pipelines.cpp), it
// proves that a scan is one file and one row: the searcher, its scratch and fallbacks, the catalog
// and the suites pick it up by themselves.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/common/ranking.hpp"
#include "kernels/embeddings/dot_args.cuh"
#include "runtime/cuda_check.hpp"
#include "trivial_copy.hpp"
#include "trivial_scan.hpp"

namespace distancies::testing {
namespace {

template <class T>
std::vector<T> download(const T* p, std::size_t n, cudaStream_t s) {
  std::vector<T> h(n);
  if (n) CUDA_CHECK(cudaMemcpyAsync(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  return h;
}

// The keys the cuBLAS tiles compute (x . q / |q| / |x|; a zero row 0), here in fp64, then the best
// K a query (key descending, row ascending), padded with the sentinels.
void score_on_host(const ScanStreams& io, const BatchScanArgs& a) {
  const int rows = a.exact.rows, dim = a.exact.dim, ld = a.ldg;
  if (a.batch == 0) return;
  const auto model = download(static_cast<const float*>(a.model), static_cast<std::size_t>(rows) * ld, io.stream);
  const auto norms = download(a.exact.norms, static_cast<std::size_t>(rows), io.stream);
  const auto queries = download(a.queries, static_cast<std::size_t>(a.batch) * dim, io.stream);
  const auto query_norms = download(a.query_norms, static_cast<std::size_t>(a.batch), io.stream);
  CUDA_CHECK(cudaStreamSynchronize(io.stream));
  std::vector<float> lists_s(static_cast<std::size_t>(a.batch) * a.K, kSentinelSim);
  std::vector<int> lists_r(lists_s.size(), kSentinelRow);
  std::vector<float> keys(static_cast<std::size_t>(rows));
  std::vector<int> order(static_cast<std::size_t>(rows));
  for (int b = 0; b < a.batch; ++b) {
    const float* q = queries.data() + static_cast<std::size_t>(b) * dim;
    for (int r = 0; r < rows; ++r) {
      double dot = 0;
      for (int d = 0; d < dim; ++d) dot += double(model[static_cast<std::size_t>(r) * ld + d]) * q[d];
      keys[r] = norms[r] > 0 && query_norms[b] > 0 ? static_cast<float>(dot / query_norms[b] / norms[r]) : 0.0f;
    }
    std::iota(order.begin(), order.end(), 0);
    const int kept = std::min(a.K, rows);
    std::partial_sort(order.begin(), order.begin() + kept, order.end(),
                      [&](int x, int y) { return ranks_before(keys[x], x, keys[y], y); });
    for (int i = 0; i < kept; ++i) {
      lists_s[static_cast<std::size_t>(b) * a.K + i] = keys[order[i]];
      lists_r[static_cast<std::size_t>(b) * a.K + i] = order[i];
    }
  }
  CUDA_CHECK(
      cudaMemcpyAsync(a.lists_s, lists_s.data(), lists_s.size() * sizeof(float), cudaMemcpyHostToDevice, io.stream));
  CUDA_CHECK(
      cudaMemcpyAsync(a.lists_r, lists_r.data(), lists_r.size() * sizeof(int), cudaMemcpyHostToDevice, io.stream));
  CUDA_CHECK(cudaStreamSynchronize(io.stream));
}

BatchScanRow host_exact_scan() {
  BatchScanRow r{kTrivialScan, "test-only: each query's candidates found on the host in fp64", "beyond the study"};
  r.slices = [](int, int, int, int) { return 1; };
  r.score = score_on_host;
  r.copy = kTrivialCopy;  // scored from its own copy, which the searcher prepares from the copy's row
  r.attach_copy = [](const DeviceModel& m, const ModelCopyRow&, const ModelCentre*, BatchScanArgs& a) {
    a.model = trivial_copy_rows(m);
    a.ldg = m.ld;
  };
  return r;
}

}  // namespace

// Registered during static initialisation, before any suite asks the tables for their rows.
const BatchScanRow& trivial_scan = add_batch_scan(host_exact_scan());
const BatchPipeline& trivial_batch_pipeline = add_batch_pipeline(BatchPipeline{
    kTrivialBatchPipeline, "test-only: the host scan + exact fp32 re-rank", "beyond the study", GemmInput::F32}
                                                                     .falls_back_to("batch_sgemm")
                                                                     .scanned_by(kTrivialScan));

}  // namespace distancies::testing
