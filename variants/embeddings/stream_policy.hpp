// Streaming a model from host memory (harness/scale/stream_search.hpp): how big a chunk, how
// many chunk slots, and how a GPU memory budget is shared between the slots and the searchers'
// own buffers. The numbers are the active tuning policy's (policy.hpp, StreamChunks), chosen
// from the `stream_sweep/*` fixtures (docs/scale.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace distancies {

struct StreamLayout {
  std::int64_t chunk_rows = 0;  // rows per chunk (the last one may have fewer)
  int buffers = 0;              // chunk slots: one scanned while the others are copied
  std::int64_t chunks = 0;
  std::size_t slot_bytes = 0;      // device bytes of one slot (vectors and norms)
  std::size_t searcher_bytes = 0;  // what is left of the budget for the searchers' buffers
  std::string why;                 // how the numbers were chosen, for logs and JSON
};

struct StreamRequest {
  std::int64_t rows = 0;
  std::size_t row_bytes = 0;      // one row's vector + norm in a slot
  std::size_t budget = 0;         // GPU memory the stream may use in all
  std::size_t per_row_extra = 0;  // searcher bytes per chunk row (reduced copies, workspace)
  bool batch = false;             // a batch pipeline: its scratch needs a larger share
  std::int64_t chunk_rows = 0;    // forced (0: the policy's)
  int buffers = 0;                // forced (0: the policy's)
};

// Throws Error when not even one row per slot fits the budget.
StreamLayout plan_stream(const StreamRequest& r);

}  // namespace distancies
