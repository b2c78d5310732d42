// The warp and block primitives the list-keeping kernels are built from, each run alone on the
// GPU against a host sort: WarpTopk (offer, insert and merge), warp_merge_topk, block_merge_lists,
// block_select_lists, select_from_lists_block and the rank-count placement. Random data with
// many exact ties in the similarities (rows distinct, as every caller guarantees), sentinel
// padding, and several k up to WarpTopk::kMaxK.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "kernels/common/list_select.cuh"
#include "kernels/common/rank_place.cuh"
#include "kernels/common/warp_merge.cuh"
#include "kernels/common/warp_topk.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "test_models.hpp"

using namespace distancies;
using distancies::testing::fresh_seed;

namespace {

// ---------------------------------------------------------------- test kernels

// One warp per list: warp w offers entries [w * n, (w + 1) * n) 32 at a time (offer), or one
// at a time warp-uniformly as the fused scan does (admits + insert), or 32 at a time merged at
// once (merge, every real entry kept, as the fused tensor-core scan does), and writes its top k.
enum class TopkMode { Offer, Insert, Merge };
template <TopkMode kMode>
__global__ void warp_topk_kernel(const float* s, const int* r, int n, int k, float* out_s, int* out_r) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warps = blockDim.x / 32;
  WarpTopk top{reinterpret_cast<float*>(smem) + warp * k,
               reinterpret_cast<int*>(smem + warps * k * sizeof(float)) + warp * k, k};
  top.clear(lane);
  const float* ws = s + static_cast<long long>(warp) * n;
  const int* wr = r + static_cast<long long>(warp) * n;
  if (kMode == TopkMode::Offer) {
    for (int base = 0; base < n; base += 32) {
      const int i = base + lane;
      top.offer(i < n ? ws[i] : kSentinelSim, i < n ? wr[i] : kSentinelRow, lane);
    }
  } else if (kMode == TopkMode::Merge) {
    for (int base = 0; base < n; base += 32) {
      const int i = base + lane;
      const bool real = i < n && wr[i] != kSentinelRow;
      top.merge(real ? ws[i] : kSentinelSim, real ? wr[i] : kSentinelRow, real, lane);
    }
  } else {
    for (int i = 0; i < n; ++i)
      if (top.admits(ws[i], wr[i])) top.insert(ws[i], wr[i], lane);
  }
  for (int i = lane; i < k; i += 32) {
    out_s[warp * k + i] = top.sims[i];
    out_r[warp * k + i] = top.rows[i];
  }
}

// One warp: out = best K of sorted a and b (all in global memory, as merge_lists_block reads
// its candidate lists).
__global__ void warp_merge_kernel(const float* as, const int* ar, const float* bs, const int* br, int K, float* os,
                                  int* orr) {
  warp_merge_topk(as, ar, bs, br, K, os, orr, threadIdx.x % 32);
}

// kWarps sorted lists of K (list w at w * K) into shared memory, then the block's best K by
// pairwise merges (kMerge) or by block_select_lists.
template <int kWarps, bool kMerge>
__global__ void __launch_bounds__(kWarps * 32)
    block_lists_kernel(const float* s, const int* r, int K, float* out_s, int* out_r) {
  extern __shared__ __align__(16) unsigned char smem[];
  const BlockLists l = carve_block_lists(smem, kWarps, K);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = threadIdx.x; i < kWarps * K; i += blockDim.x) {
    l.s[i] = s[i];
    l.r[i] = r[i];
  }
  __syncthreads();
  if (kMerge) {
    block_merge_lists<kWarps>(l, K, warp, lane);
    write_block_list(l, K, warp, lane, out_s, out_r);
  } else {
    block_select_lists<kWarps>(l, K, out_s, out_r);
  }
}

// The rank-count placement alone: m entries into shared memory (split or packed), then the
// best k by place_by_rank over sentinels from fill_sentinels.
constexpr int kPlaceMax = 1024;  // 32 KB of static shared memory for both layouts
template <bool kPacked>
__global__ void place_kernel(const float* s, const int* r, int m, int k, float* out_s, int* out_r) {
  __shared__ float in_s[kPlaceMax], res_s[kPlaceMax];
  __shared__ int in_r[kPlaceMax], res_r[kPlaceMax];
  __shared__ ScoredRow in_p[kPlaceMax], res_p[kPlaceMax];
  const int t = threadIdx.x, n = blockDim.x;
  for (int i = t; i < m; i += n) {
    in_s[i] = s[i];
    in_r[i] = r[i];
    in_p[i] = ScoredRow{s[i], r[i]};
  }
  if (kPacked)
    fill_sentinels(PackedEntries{res_p}, k, t, n);
  else
    fill_sentinels(SplitEntries{res_s, res_r}, k, t, n);
  __syncthreads();
  if (kPacked)
    place_by_rank(PackedEntries{in_p}, m, PackedEntries{res_p}, k, t, n);
  else
    place_by_rank(SplitEntries{in_s, in_r}, m, SplitEntries{res_s, res_r}, k, t, n);
  __syncthreads();
  for (int i = t; i < k; i += n) {
    out_s[i] = kPacked ? res_p[i].s : res_s[i];
    out_r[i] = kPacked ? res_p[i].r : res_r[i];
  }
}

// ---------------------------------------------------------------- host side

struct Entry {
  float s;
  int r;
};
bool before(const Entry& a, const Entry& b) { return ranks_before(a.s, a.r, b.s, b.r); }
const Entry kNone{kSentinelSim, kSentinelRow};

// Similarities from few levels (many exact ties), rows distinct: `n` of them from `rows`.
std::vector<Entry> random_entries(int n, std::vector<int>& rows, std::mt19937& rng) {
  std::uniform_int_distribution<int> level(-20, 20);
  std::vector<Entry> e(static_cast<std::size_t>(n));
  for (auto& x : e) {
    x.s = level(rng) / 20.0f;
    x.r = rows.back();
    rows.pop_back();
  }
  return e;
}

std::vector<int> shuffled_rows(int n, std::mt19937& rng) {
  std::vector<int> rows(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) rows[i] = 3 * i + 1;  // not the indices: a kernel must carry them
  std::shuffle(rows.begin(), rows.end(), rng);
  return rows;
}

// A sorted list of K: `real` entries, then sentinels.
std::vector<Entry> sorted_list(int K, int real, std::vector<int>& rows, std::mt19937& rng) {
  std::vector<Entry> l = random_entries(real, rows, rng);
  std::sort(l.begin(), l.end(), before);
  l.resize(static_cast<std::size_t>(K), kNone);
  return l;
}

// The best k of `all` (sentinels included), sentinel-padded to k.
std::vector<Entry> best_k(std::vector<Entry> all, int k) {
  std::sort(all.begin(), all.end(), before);
  all.resize(static_cast<std::size_t>(k), kNone);
  return all;
}

struct DeviceEntries {
  DeviceBuffer s, r;
  explicit DeviceEntries(const std::vector<Entry>& e)
      : s(std::max<std::size_t>(e.size(), 1) * sizeof(float), "test sims"),
        r(std::max<std::size_t>(e.size(), 1) * sizeof(int), "test rows") {
    std::vector<float> hs;
    std::vector<int> hr;
    for (const Entry& x : e) hs.push_back(x.s), hr.push_back(x.r);
    if (e.empty()) return;
    CUDA_CHECK(cudaMemcpy(s.get(), hs.data(), hs.size() * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(r.get(), hr.data(), hr.size() * sizeof(int), cudaMemcpyHostToDevice));
  }
  explicit DeviceEntries(int n) : DeviceEntries(std::vector<Entry>(static_cast<std::size_t>(n), Entry{0.0f, -1})) {}
  const float* cs() const { return s.as<float>(); }
  const int* cr() const { return r.as<int>(); }
  std::vector<Entry> download(int n) const {
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> hs(static_cast<std::size_t>(n));
    std::vector<int> hr(static_cast<std::size_t>(n));
    CUDA_CHECK(cudaMemcpy(hs.data(), s.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hr.data(), r.get(), n * sizeof(int), cudaMemcpyDeviceToHost));
    std::vector<Entry> e(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) e[i] = {hs[i], hr[i]};
    return e;
  }
};

void expect_same(const std::vector<Entry>& want, const std::vector<Entry>& got, const std::string& what) {
  ASSERT_EQ(want.size(), got.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].r, got[i].r) << what << ": entry " << i;
    ASSERT_EQ(want[i].s, got[i].s) << what << ": entry " << i;
  }
}

const int kKs[] = {1, 5, 31, 32, 33, 64, 100, 128};

}  // namespace

// Four warps, each its own stream of n entries (some of them sentinels, as a scan's tail
// offers): each warp's top k equals the host's, for n below, at and well above k.
TEST(WarpPrimitives, WarpTopkKeepsTheBestK) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  constexpr int kWarps = 4;
  for (int k : kKs)
    for (int n : {3, k, 700, 5000}) {
      std::vector<int> rows = shuffled_rows(kWarps * n, rng);
      std::vector<Entry> in;
      std::vector<std::vector<Entry>> want;
      for (int w = 0; w < kWarps; ++w) {
        std::vector<Entry> e = random_entries(n, rows, rng);
        for (int i = 0; i < n; i += 97) e[i] = kNone;  // sentinels mixed in
        in.insert(in.end(), e.begin(), e.end());
        want.push_back(best_k(e, k));
      }
      const DeviceEntries d(in);
      for (TopkMode mode : {TopkMode::Offer, TopkMode::Insert, TopkMode::Merge}) {
        DeviceEntries out(kWarps * k);
        const std::size_t smem = kWarps * static_cast<std::size_t>(k) * (sizeof(float) + sizeof(int));
        if (mode == TopkMode::Offer)
          warp_topk_kernel<TopkMode::Offer>
              <<<1, kWarps * 32, smem>>>(d.cs(), d.cr(), n, k, out.s.as<float>(), out.r.as<int>());
        else if (mode == TopkMode::Insert)
          warp_topk_kernel<TopkMode::Insert>
              <<<1, kWarps * 32, smem>>>(d.cs(), d.cr(), n, k, out.s.as<float>(), out.r.as<int>());
        else
          warp_topk_kernel<TopkMode::Merge>
              <<<1, kWarps * 32, smem>>>(d.cs(), d.cr(), n, k, out.s.as<float>(), out.r.as<int>());
        CUDA_CHECK_LAUNCH();
        const char* mode_name = mode == TopkMode::Offer ? "offer" : mode == TopkMode::Insert ? "insert" : "merge";
        const std::vector<Entry> got = out.download(kWarps * k);
        for (int w = 0; w < kWarps; ++w)
          expect_same(want[w], std::vector<Entry>(got.begin() + w * k, got.begin() + (w + 1) * k),
                      std::string(mode_name) + ", k " + std::to_string(k) + ", n " + std::to_string(n) + ", warp " +
                          std::to_string(w) + ", seed " + std::to_string(seed));
      }
    }
}

// Two sorted lists, each partly sentinels (down to none real): the best K of both.
TEST(WarpPrimitives, WarpMergeTakesTheBestOfTwoLists) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  for (int K : kKs)
    for (int real_a : {0, K / 3, K})
      for (int real_b : {0, K / 2, K}) {
        std::vector<int> rows = shuffled_rows(2 * K, rng);
        const std::vector<Entry> a = sorted_list(K, real_a, rows, rng), b = sorted_list(K, real_b, rows, rng);
        std::vector<Entry> all = a;
        all.insert(all.end(), b.begin(), b.end());
        const DeviceEntries da(a), db(b);
        DeviceEntries out(K);
        warp_merge_kernel<<<1, 32>>>(da.cs(), da.cr(), db.cs(), db.cr(), K, out.s.as<float>(), out.r.as<int>());
        CUDA_CHECK_LAUNCH();
        expect_same(best_k(all, K), out.download(K),
                    "K " + std::to_string(K) + ", real " + std::to_string(real_a) + " + " + std::to_string(real_b) +
                        ", seed " + std::to_string(seed));
      }
}

// A block's warp lists (some short, some all sentinels, and the best entries crowded into one
// list) to its best K: the pairwise-merge tree and block_select_lists agree with the host.
template <int kWarps>
void check_block_lists(std::mt19937& rng, std::uint32_t seed) {
  std::uniform_int_distribution<int> pick(0, 2);
  for (int K : kKs)
    for (int shape = 0; shape < 3; ++shape) {
      std::vector<int> rows = shuffled_rows(kWarps * K, rng);
      std::vector<Entry> in, all;
      for (int w = 0; w < kWarps; ++w) {
        const int real = shape == 0 ? K : shape == 1 ? (pick(rng) == 0 ? 0 : K / 2 + w % 3) : (w == 1 ? K : K / 4);
        std::vector<Entry> l = sorted_list(K, std::min(real, K), rows, rng);
        if (shape == 2 && w == 1)
          for (auto& e : l) e.s += 2.0f;  // every best entry in one list
        std::sort(l.begin(), l.end(), before);
        in.insert(in.end(), l.begin(), l.end());
      }
      const std::vector<Entry> want = best_k(in, K);
      const DeviceEntries d(in);
      const std::size_t smem = 2u * kWarps * K * (sizeof(float) + sizeof(int));
      for (bool merge : {true, false}) {
        DeviceEntries out(K);
        if (merge)
          block_lists_kernel<kWarps, true>
              <<<1, kWarps * 32, smem>>>(d.cs(), d.cr(), K, out.s.as<float>(), out.r.as<int>());
        else
          block_lists_kernel<kWarps, false>
              <<<1, kWarps * 32, smem>>>(d.cs(), d.cr(), K, out.s.as<float>(), out.r.as<int>());
        CUDA_CHECK_LAUNCH();
        expect_same(want, out.download(K),
                    std::string(merge ? "block_merge_lists" : "block_select_lists") + ", " + std::to_string(kWarps) +
                        " warps, K " + std::to_string(K) + ", shape " + std::to_string(shape) + ", seed " +
                        std::to_string(seed));
      }
    }
}

TEST(WarpPrimitives, BlockListsMergeAndSelectTheBestK) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  check_block_lists<8>(rng, seed);
  check_block_lists<16>(rng, seed);
}

// select_from_lists_block with each way to find its bound, on lists like the scan blocks'
// (ties, short lists), and on a shape whose survivors overflow the pool (the pairwise-merge
// fallback): the best K of all the lists.
TEST(WarpPrimitives, SelectFromListsBlockTakesTheBestK) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  constexpr int kThreads = kListSelectThreads;
  for (int K : {1, 10, 64, 128})
    for (int chunks : {1, 3, 64, 264})
      for (int shape = 0; shape < 2; ++shape) {
        std::vector<int> rows = shuffled_rows(chunks * K, rng);
        std::vector<Entry> in;
        for (int c = 0; c < chunks; ++c) {
          const int real = shape == 0 ? K - (c % 4) * K / 4 : K;
          std::vector<Entry> l = sorted_list(K, real, rows, rng);
          if (shape == 1 && c < 20)
            for (auto& e : l) e.s += 2.0f;  // 20 lists hold everything at the top
          in.insert(in.end(), l.begin(), l.end());
        }
        const std::vector<Entry> want = best_k(in, K);
        const DeviceEntries d(in);
        for (int bound = 0; bound < 3; ++bound) {
          DeviceEntries out(K);
          if (bound == 0)
            select_from_lists_kernel<kThreads, BoundBy::kHeadRanks>
                <<<1, kThreads>>>(d.cs(), d.cr(), chunks, K, out.s.as<float>(), out.r.as<int>());
          else if (bound == 1)
            select_from_lists_kernel<kThreads, BoundBy::kBitonicSort>
                <<<1, kThreads>>>(d.cs(), d.cr(), chunks, K, out.s.as<float>(), out.r.as<int>());
          else
            select_from_lists_kernel<kThreads, BoundBy::kCubMergeSort>
                <<<1, kThreads>>>(d.cs(), d.cr(), chunks, K, out.s.as<float>(), out.r.as<int>());
          CUDA_CHECK_LAUNCH();
          expect_same(want, out.download(K),
                      "bound " + std::to_string(bound) + ", K " + std::to_string(K) + ", chunks " +
                          std::to_string(chunks) + ", shape " + std::to_string(shape) + ", seed " +
                          std::to_string(seed));
        }
      }
}

// The rank-count placement itself, on split and packed entries: m entries in random order
// (ties in similarity, rows distinct, some sentinels), k below, at and above m.
TEST(WarpPrimitives, PlaceByRankOrdersDistinctRows) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  std::mt19937 rng(seed);
  for (int m : {1, 37, 256, 1000, kPlaceMax})
    for (int k : {1, 10, 128, 300, kPlaceMax}) {
      std::vector<int> rows = shuffled_rows(m, rng);
      std::vector<Entry> in = random_entries(m, rows, rng);
      for (int i = 0; i < m; i += 13) in[i] = kNone;
      const std::vector<Entry> want = best_k(in, k);
      const DeviceEntries d(in);
      for (bool packed : {false, true}) {
        DeviceEntries out(k);
        if (packed)
          place_kernel<true><<<1, 256>>>(d.cs(), d.cr(), m, k, out.s.as<float>(), out.r.as<int>());
        else
          place_kernel<false><<<1, 256>>>(d.cs(), d.cr(), m, k, out.s.as<float>(), out.r.as<int>());
        CUDA_CHECK_LAUNCH();
        expect_same(want, out.download(k),
                    std::string(packed ? "packed" : "split") + ", m " + std::to_string(m) + ", k " + std::to_string(k) +
                        ", seed " + std::to_string(seed));
      }
    }
}
