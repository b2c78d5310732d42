// select_lists/<selector>/K:<K>: the one-block selection of the best K from the per-block lists
// a scan leaves (one per block of a 2-blocks-per-SM grid), on lists built like a scan's: the
// rows of the real-shaped model dealt out to the blocks, each list the best K of its share.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "kernels/embeddings/dot_args.cuh"
#include "runtime/device.hpp"
#include "variants/embeddings/list_select.hpp"

namespace distancies::bench {
namespace {

void select_lists_fixture(benchmark::State& st, const ListSelector* sel, int K) {
  const BenchState& s = bench_state();
  const int chunks = 2 * device_status().props.multiProcessorCount;
  const long long rows = s.host.rows;
  std::mt19937 rng(20261123);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> ls(static_cast<std::size_t>(chunks) * K, kSentinelSim);
  std::vector<int> lr(ls.size(), kSentinelRow);
  std::vector<std::pair<float, int>> share;
  for (int c = 0; c < chunks; ++c) {
    share.clear();
    for (long long r = c; r < rows; r += chunks) share.emplace_back(u(rng), static_cast<int>(r));
    const auto better = [](const auto& a, const auto& b) { return ranks_before(a.first, a.second, b.first, b.second); };
    const std::size_t keep = std::min<std::size_t>(K, share.size());
    std::partial_sort(share.begin(), share.begin() + keep, share.end(), better);
    for (std::size_t i = 0; i < keep; ++i) ls[c * K + i] = share[i].first, lr[c * K + i] = share[i].second;
  }
  DeviceBuffer ds(ls.size() * sizeof(float), "lists"), dr(lr.size() * sizeof(int), "lists");
  DeviceBuffer os(K * sizeof(float), "selection"), orr(K * sizeof(int), "selection");
  CUDA_CHECK(cudaMemcpy(ds.get(), ls.data(), ls.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dr.get(), lr.data(), lr.size() * sizeof(int), cudaMemcpyHostToDevice));
  auto run = [&](cudaStream_t str) {
    sel->launch(ds.as<float>(), dr.as<int>(), chunks, K, os.as<float>(), orr.as<int>(), str);
  };
  Means m;
  ExecOptions o;
  o.min_bytes = double(ls.size()) * (sizeof(float) + sizeof(int));  // every list read once
  o.on_sample = [&](double ms) { m.add("kernel_ms", ms); };
  if (!exec(st, run, o)) return;
  m.publish(st);
  parameters(st, {{"lists", double(chunks)}, {"K", double(K)}, {"rows", double(rows)}});
}

}  // namespace

void register_list_fixtures() {
  for (const ListSelector& sel : list_selectors())
    for (int K : {10, 64, 128})
      timed(add(FixtureName("select_lists", sel.name).axis("K", K), select_lists_fixture, &sel, K));
}

}  // namespace distancies::bench
