#include "harness/embeddings/data_probe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "runtime/model.hpp"
#include "variants/embeddings/batch_scans.hpp"

namespace distancies {

RowQueries model_rows_as_queries(const DeviceModel& dm, int n) {
  RowQueries out;
  out.q.resize(static_cast<std::size_t>(n) * dm.dim);
  for (int i = 0; i < n; ++i) {
    const long long row = (static_cast<long long>(i) * 104729) % dm.rows;
    float* q = out.q.data() + static_cast<std::size_t>(i) * dm.dim;
    CUDA_CHECK(cudaMemcpy(q, dm.d_vectors() + row * dm.ld, dm.dim * sizeof(float), cudaMemcpyDeviceToHost));
    out.norms.push_back(vector_norm(q, dm.dim));
  }
  return out;
}

namespace {
// A batch's time, best of two; without its fallback's stage unless `with_fallbacks` (a batch
// pipeline's redo is priced by redo_ms, a per-query loop's is part of its time).
double best_time(BatchSearcher& bs, const BatchPipeline& p, const RowQueries& q, int n, int k,
                 bool with_fallbacks = false) {
  double best = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < 2; ++rep) {
    Breakdown bd;
    bs.search(p, q.q.data(), q.norms.data(), n, k, &bd);
    double ms = bd.total_ms;
    for (const auto& s : bd.stages)
      if (s.name == "fallback" && !with_fallbacks) ms -= s.ms;
    best = std::min(best, ms);
  }
  return best;
}
}  // namespace

DataRates probe_data_rates(DeviceModel& dm, BatchSearcher& bs, int k, int cc_major, int queries) {
  DataRates rates;
  const int n = static_cast<int>(std::min<long long>(queries, dm.rows));
  if (n <= 0 || k > BatchPolicy::kMaxK) return rates;
  // The probe batch is the large one's first n rows, the small one its first 16 (the same rule): fetched once.
  const int large = static_cast<int>(std::min<long long>(kProbeLargeQueries, dm.rows));
  const RowQueries q = model_rows_as_queries(dm, std::max(n, large));
  const int small = std::min(n, kProbeSmallQueries);  // the first 16 of them
  for (const BatchPipeline& p : batch_pipelines()) {
    if (p.per_query_pipeline || batch_scan_refusal(*p.scan_row, dm.dim, BatchPolicy::candidates(k), cc_major)) continue;
    bs.search(p, q.q.data(), q.norms.data(), n, k);  // makes the copies it reads; counts the redone
    const double redone = double(bs.last_fallbacks()) / n;
    // Then its time on this model (its fallback's stage left out: redo_ms counts it).
    const double best = best_time(bs, p, q, n, k);
    const double table = auto_table_ms(p.name, n);
    DataRates::Rate rate{&p, redone, std::isfinite(table) && table > 0 && best > 0 ? best / table : 1.0};
    // And the large batch: its share of redone queries replaces the small one's (a share of a few
    // per cent, which decides batches of a hundred, is below what 64 rows can see), and its time
    // shows what a query costs beyond its share of the read where the scan turns compute-bound.
    const double table_small = small < n ? auto_table_ms(p.name, small) : std::nan("");
    if (std::isfinite(table_small) && table_small > 0) {
      const double ms = best_time(bs, p, q, small, k);
      if (ms > 0) rate.scale_small = ms / table_small, rate.small_batch = small;
    }
    const double table_large = large > n ? auto_table_ms(p.name, large) : std::nan("");
    if (std::isfinite(table_large) && table_large > 0) {
      bs.search(p, q.q.data(), q.norms.data(), large, k);
      rate.redone = double(bs.last_fallbacks()) / large;
      const double ms = best_time(bs, p, q, large, k);
      if (ms > 0) rate.scale_large = ms / table_large, rate.large_batch = large;
    }
    rates.batch.push_back(rate);
  }
  // The per-query loops: one query's time through each, its copy made first, its fallbacks in it.
  const int nl = std::min(n, kProbeLoopQueries);
  for (const BatchPipeline& p : batch_pipelines()) {
    if (!p.per_query_pipeline) continue;
    bs.search(p, q.q.data(), q.norms.data(), nl, k);
    rates.loops.push_back({&p, best_time(bs, p, q, nl, k, true) / nl});
  }
  GpuSearcher one(dm, nullptr);
  const Pipeline& f16 = f16_one_query_pipeline();
  for (int i = 0; i < n; ++i) one.search(f16, q.q.data() + static_cast<std::size_t>(i) * dm.dim, q.norms[i], k);
  const auto& counts = one.certificate_counts();
  rates.one_query_f16 = double(counts.uncertified + counts.refused) / n;
  rates.probe_queries = n;
  return rates;
}

}  // namespace distancies
