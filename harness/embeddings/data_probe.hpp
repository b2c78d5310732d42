// What the data does to the batch certificates, measured on the resident model: a sample of its
// own rows asked as one batch through every batch pipeline `auto` may choose, the share of
// them each had to redo on its fallback, and its time on this model against the table's at that
// size, at kProbeSmallQueries and at kProbeLargeQueries (whose share of redone queries is the one
// kept). `auto` scales the measured table by it and adds the predicted time of the redo
// (variants/embeddings/auto_plan.hpp; docs/data.md says why).
#pragma once
#include <vector>

#include "harness/embeddings/batch_search.hpp"
#include "harness/embeddings/gpu_search.hpp"
#include "runtime/device_model.hpp"
#include "variants/embeddings/auto_plan.hpp"

namespace distancies {

constexpr int kProbeQueries = 64;
constexpr int kProbeLargeQueries = 512;  // the large probe batch (the same rule's first 512 rows)
constexpr int kProbeSmallQueries = 16;   // the small one (its first 16: its time, not its share)
constexpr int kProbeLoopQueries = 16;    // the per-query loops' timed rows (their time is linear in them)

// The vectors of rows (i * 104729) mod rows, i < n, packed, and their norms: the rule the
// benchmarks' batches and the peers use for their queries.
struct RowQueries {
  std::vector<float> q;
  std::vector<float> norms;
};
RowQueries model_rows_as_queries(const DeviceModel& dm, int n);

// And `fused_f16` once per row for the one-query plan, and every per-query loop (DataRates::loops)
// timed over the first kProbeLoopQueries rows. Rows (i * 104729) mod rows, i < min(queries, rows),
// the benchmarks' rule. Pipelines whose scan refuses the model or the device are not asked as a
// batch, and nothing is when k is beyond the batch certificate (the table alone decides).
DataRates probe_data_rates(DeviceModel& dm, BatchSearcher& bs, int k, int cc_major, int queries = kProbeQueries);

}  // namespace distancies
