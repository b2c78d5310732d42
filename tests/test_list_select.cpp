// Every one-block selection of the best K from per-block sorted lists (variants/embeddings/list_select.hpp)
// against a host sort of all entries: random lists with ties and short (sentinel-padded) lists,
// and the two shapes that overflow its pool and take the pairwise-merge fallback.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "gpu_skip.hpp"
#include "kernels/embeddings/dot_args.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "test_models.hpp"
#include "variants/embeddings/list_select.hpp"

using namespace distancies;

namespace {

struct Entry {
  float s;
  int r;
};
bool before(const Entry& a, const Entry& b) { return ranks_before(a.s, a.r, b.s, b.r); }
constexpr float kNoneSim = kSentinelSim;
constexpr int kNoneRow = kSentinelRow;

// `chunks` lists of K: each sorted best first, sentinel-padded after its real entries.
using Lists = std::vector<std::vector<Entry>>;

std::vector<Entry> select_on_gpu(const ListSelector& sel, const Lists& lists, int K) {
  const int chunks = static_cast<int>(lists.size());
  std::vector<float> s;
  std::vector<int> r;
  for (const auto& l : lists)
    for (const Entry& e : l) s.push_back(e.s), r.push_back(e.r);
  DeviceBuffer ds(s.size() * sizeof(float)), dr(r.size() * sizeof(int));
  DeviceBuffer os(K * sizeof(float)), orr(K * sizeof(int));
  CUDA_CHECK(cudaMemcpy(ds.get(), s.data(), s.size() * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dr.get(), r.data(), r.size() * sizeof(int), cudaMemcpyHostToDevice));
  sel.launch(ds.as<float>(), dr.as<int>(), chunks, K, os.as<float>(), orr.as<int>(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> gs(K);
  std::vector<int> gr(K);
  CUDA_CHECK(cudaMemcpy(gs.data(), os.get(), K * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gr.data(), orr.get(), K * sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<Entry> out(K);
  for (int i = 0; i < K; ++i) out[i] = {gs[i], gr[i]};
  return out;
}

// Every registered selector.
void expect_best_k(const Lists& lists, int K, const std::string& what) {
  std::vector<Entry> all;
  for (const auto& l : lists) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end(), before);
  for (const ListSelector& sel : list_selectors()) {
    const std::vector<Entry> got = select_on_gpu(sel, lists, K);
    for (int i = 0; i < K; ++i) {
      ASSERT_EQ(got[i].r, all[i].r) << sel.name << ", " << what << ": entry " << i;
      ASSERT_EQ(got[i].s, all[i].s) << sel.name << ", " << what << ": entry " << i;
    }
  }
}

// Rows are dealt out to lists at random; sims drawn from few values (many exact ties).
Lists random_lists(int chunks, int K, int real_per_list, std::mt19937& rng) {
  std::vector<int> rows(static_cast<std::size_t>(chunks) * real_per_list);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int>(i);
  std::shuffle(rows.begin(), rows.end(), rng);
  std::uniform_int_distribution<int> level(-50, 50);
  Lists lists(chunks);
  for (int c = 0; c < chunks; ++c) {
    auto& l = lists[c];
    for (int i = 0; i < real_per_list; ++i) l.push_back({level(rng) / 50.0f, rows[c * real_per_list + i]});
    std::sort(l.begin(), l.end(), before);
    l.resize(K, Entry{kNoneSim, kNoneRow});
  }
  return lists;
}

}  // namespace

TEST(ListSelect, EqualsAHostSortOfEveryEntry) {
  DISTANCIES_REQUIRE_GPU();
  std::mt19937 rng(distancies::testing::fresh_seed());
  for (int K : {1, 10, 64, 128})
    for (int chunks : {1, 7, 264, 3000}) {
      for (int real : {K, std::max(1, K / 3)}) {
        const std::string what =
            "K=" + std::to_string(K) + " chunks=" + std::to_string(chunks) + " real=" + std::to_string(real);
        expect_best_k(random_lists(chunks, K, real, rng), K, what);
      }
    }
}

TEST(ListSelect, FewerRealEntriesThanKOverflowThePoolAndFallBack) {
  DISTANCIES_REQUIRE_GPU();
  // 100 lists of 64 with 10 real entries in all: the bound is a sentinel, every entry survives.
  std::mt19937 rng(distancies::testing::fresh_seed());
  Lists lists(100, std::vector<Entry>(64, Entry{kNoneSim, kNoneRow}));
  for (int i = 0; i < 10; ++i) lists[i * 7][0] = {0.1f * i, 1000 - i};
  expect_best_k(lists, 64, "10 real entries");
}

TEST(ListSelect, BestEntriesConcentratedInFewListsFallBack) {
  DISTANCIES_REQUIRE_GPU();
  // 264 lists of 128; lists 0..19 hold every entry above 0 (2,560 of them), the rest are
  // negative: only 7 leading entries per list fit the pool, so the bound is low and more than
  // 2,048 entries pass it.
  Lists lists(264);
  int row = 0;
  for (int c = 0; c < 264; ++c) {
    for (int i = 0; i < 128; ++i) {
      const float s = c < 20 ? 1.0f - (c * 128 + i) * 1e-4f : -0.5f - (c * 128 + i) * 1e-6f;
      lists[c].push_back({s, row++});
    }
    std::sort(lists[c].begin(), lists[c].end(), before);
  }
  expect_best_k(lists, 128, "concentrated");
}
