// A trivial registry row, added here and nowhere else: a top-k stage that sorts the similarity
// array on the host, and a pipeline that uses it after V4's dot. Linked into test_registry with
// the registry-driven suites of test_gpu_variants.cpp, it proves that one row is all a new
// entry takes: those suites, `distancies list`'s catalog and the JSON pick it up by themselves.
#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/common/ranking.hpp"
#include "runtime/cuda_check.hpp"
#include "trivial_entry.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies::testing {
namespace {

std::size_t no_scratch(int, int) { return 0; }

// Copies the n similarities down, orders them (similarity descending, then row), copies the
// best k back to the front.
void run_host_sort(TopkState& s, cudaStream_t stream) {
  if (s.n == 0) return;
  std::vector<float> sims(static_cast<std::size_t>(s.n));
  std::vector<int> rows(static_cast<std::size_t>(s.n));
  CUDA_CHECK(cudaMemcpyAsync(sims.data(), s.sims, sims.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaMemcpyAsync(rows.data(), s.idx, rows.size() * sizeof(int), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<int> order(static_cast<std::size_t>(s.n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return ranks_before(sims[a], rows[a], sims[b], rows[b]); });
  const int kk = std::min(s.k, s.n);
  std::vector<float> top_s(static_cast<std::size_t>(kk));
  std::vector<int> top_r(static_cast<std::size_t>(kk));
  for (int i = 0; i < kk; ++i) {
    top_s[i] = sims[order[i]];
    top_r[i] = rows[order[i]];
  }
  CUDA_CHECK(cudaMemcpyAsync(s.sims, top_s.data(), kk * sizeof(float), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(s.idx, top_r.data(), kk * sizeof(int), cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  s.chunks = 1;
}

}  // namespace

// Registered during static initialisation, before any suite asks the tables for their rows.
const TopkStage& trivial_stage =
    add_topk_stage(TopkStage{kTrivialStage, "test-only: std::stable_sort on the host", "beyond the study"}
                       .takes(StageData::Similarities)
                       .leaves(StageData::TopK)
                       .launched_by(run_host_sort, no_scratch));
const Pipeline& trivial_pipeline =
    add_pipeline(Pipeline{kTrivialPipeline, "test-only: V4's dot, then the host sort", "beyond the study"}
                     .scored_by("warp_shuffle_dot")
                     .ranked_by({kTrivialStage})
                     .with_habits(MemoryHabits(MemoryHabits::kPinnedHost)));

}  // namespace distancies::testing
