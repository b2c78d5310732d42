#include "variants/embeddings/stream_policy.hpp"

#include <algorithm>

#include "runtime/error.hpp"
#include "variants/embeddings/policy.hpp"

namespace distancies {

StreamLayout plan_stream(const StreamRequest& r) {
  using P = policy::Active::StreamChunks;
  StreamLayout l;
  l.buffers = r.buffers > 0 ? r.buffers : P::kBuffers;
  if (r.rows <= 0) return l;
  // The slots take their share of the budget; the rest is the searchers' (workspace, reduced
  // copies of a chunk, a batch's score tiles). A chunk is at most the measured best size.
  const double share = r.batch ? P::kBatchSlotShare : P::kSlotShare;
  const std::size_t slots_budget = static_cast<std::size_t>(static_cast<double>(r.budget) * share);
  const std::size_t per_row = r.row_bytes * static_cast<std::size_t>(l.buffers) + 2 * r.per_row_extra;
  std::int64_t rows = static_cast<std::int64_t>(slots_budget / std::max<std::size_t>(per_row, 1));
  const std::int64_t policy_rows = static_cast<std::int64_t>(P::kChunkBytes / std::max<std::size_t>(r.row_bytes, 1));
  l.why = r.chunk_rows > 0 ? "chunk rows given" : "policy: " + std::to_string(P::kChunkBytes >> 20) + " MiB chunks";
  if (r.chunk_rows > 0)
    rows = r.chunk_rows;
  else if (rows > policy_rows)
    rows = policy_rows;
  else
    l.why = "budget: " + std::to_string(r.budget >> 20) + " MiB for " + std::to_string(l.buffers) + " slots";
  rows = std::min(rows, r.rows);
  if (rows < 1)
    throw OutOfMemory("GPU out of memory: a budget of " + std::to_string(r.budget >> 20) + " MiB cannot hold " +
                      std::to_string(l.buffers) + " chunk slots of even one row");
  l.chunk_rows = rows;
  l.chunks = (r.rows + rows - 1) / rows;
  l.slot_bytes = static_cast<std::size_t>(rows) * r.row_bytes;
  const std::size_t used = l.slot_bytes * static_cast<std::size_t>(l.buffers);
  l.searcher_bytes = r.budget > used ? r.budget - used : 0;
  return l;
}

}  // namespace distancies
