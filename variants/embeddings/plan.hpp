// Plan, then execute: what one pipeline needs for one shape (rows, dim, k), worked out before
// anything is launched. The searchers allocate from it and run its stages in order.
#pragma once
#include <cstddef>
#include <vector>

#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {

struct Plan {
  const Pipeline* pipeline = nullptr;
  int rows = 0, dim = 0, k = 0;
  const DotVariant* dot = nullptr;       // null when the first stage scans the model
  std::vector<const TopkStage*> stages;  // run in order
  std::size_t temp_bytes = 0;            // the largest scratch any stage asks for
  std::size_t capacity = 0;              // entries of each candidate buffer (topk_capacity)
  std::size_t workspace_bytes = 0;       // every device buffer of the workspace together
  MemoryHabits habits;
  Storage storage = Storage::F32;      // the copy of the vectors its stages read
  const ModelCopyRow* copy = nullptr;  // that copy's row (null: the fp32 rows), prepared before a search
  std::size_t copy_bytes = 0;          // the bytes it holds (kept with the model, not the workspace)
  const Pipeline* fallback = nullptr;  // answers when a stage cannot certify its result
};

// k >= 1 (else an Error). The pipeline's references were resolved when its table was built.
Plan make_plan(const Pipeline& p, int rows, int dim, int k);

}  // namespace distancies
