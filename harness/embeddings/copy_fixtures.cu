// Making each model copy, timed: every row of model_copies() over the bench's model, the copy it
// comes after kept and this one dropped before each sample, so that a copy's cost is its own
// figure rather than a hidden part of some first search (docs/methodology.md, "Model copies").
#include <chrono>
#include <string>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "runtime/cuda_check.hpp"
#include "variants/embeddings/model_copies.hpp"

namespace distancies::bench {
namespace {

void copy_fixture(benchmark::State& st, const ModelCopyRow* row) {
  DeviceModel& dm = *bench_state().device;
  if (row->after_row) prepare_copy(dm, *row->after_row);
  if (row->refusal)
    if (const auto no = row->refusal(dm)) return skip(st, no->why);
  ExecOptions o;
  // Every maker reads every row at least once.
  o.min_bytes = double(dm.rows) * dm.dim * sizeof(float);
  const bool ok = exec_timed(
      st,
      [&](cudaStream_t) {
        dm.drop_copy(row->name);
        CUDA_CHECK(cudaDeviceSynchronize());  // the freeing is not the making
        const auto t0 = std::chrono::steady_clock::now();
        prepare_copy(dm, *row);
        CUDA_CHECK(cudaDeviceSynchronize());
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      },
      o);
  if (!ok) return;
  parameters(st, {{"rows", double(dm.rows)}, {"dim", double(dm.dim)}});
  st.counters["copy_bytes"] = double(prepared_copy(dm, *row).bytes());
}

}  // namespace

void register_copy_fixtures() {
  for (const ModelCopyRow& row : model_copies()) timed(add(FixtureName("copy", row.name), copy_fixture, &row));
}

}  // namespace distancies::bench
