#include "variants/embeddings/plan.hpp"

#include <algorithm>
#include <string>

#include "runtime/error.hpp"

namespace distancies {

Plan make_plan(const Pipeline& p, int rows, int dim, int k) {
  if (k <= 0) throw Error("k must be at least 1");
  Plan plan;
  plan.pipeline = &p;
  plan.rows = rows;
  plan.dim = dim;
  plan.k = k;
  plan.dot = p.dot_variant;
  plan.stages = p.stages;
  for (const TopkStage* s : plan.stages) {
    if (!s) throw Error(std::string("pipeline ") + p.name + " names a stage that is not registered");
    plan.temp_bytes = std::max(plan.temp_bytes, s->temp_bytes(rows, k));
  }
  plan.capacity = topk_capacity(rows, k);
  // similarities, indices and their ping-pong partners; scratch; the query; the status flag
  plan.workspace_bytes = plan.capacity * 2 * (sizeof(float) + sizeof(int)) + plan.temp_bytes +
                         static_cast<std::size_t>(dim) * sizeof(float) + sizeof(int);
  plan.habits = p.habits;
  plan.storage = p.storage;
  plan.copy = reduced_copy_row(p.storage);
  if (plan.copy) plan.copy_bytes = plan.copy->bytes(rows, dim);
  plan.fallback = p.fallback_pipeline;
  return plan;
}

}  // namespace distancies
