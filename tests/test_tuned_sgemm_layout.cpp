// The tuned SIMT SGEMM's index maps (kernels/matmul/tuned_sgemm_layout.hpp), on the CPU, for every
// registered configuration: each element of C has exactly one owning thread, each element of a K
// slice is copied exactly once and read back where the owner's sums need it, the kernel's pointer
// steps name the same copies as the maps, and no warp's shared-memory store or float4 load has a
// bank conflict (docs/matmul.md, "tuned_sgemm").
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kernels/matmul/tuned_sgemm_layout.hpp"

using namespace distancies::tuned_sgemm;

namespace {

constexpr int kBanks = 32;

template <class Cfg>
std::string name() {
  return std::to_string(Cfg::kBM) + "x" + std::to_string(Cfg::kBN) + "x" + std::to_string(Cfg::kBK) + "_t" +
         std::to_string(Cfg::kTM) + "x" + std::to_string(Cfg::kTN) + "_s" + std::to_string(Cfg::kStages);
}

// 4-byte accesses of one warp (word offsets): conflict-free when distinct words sit in distinct banks.
bool words_conflict_free(const std::vector<int>& words) {
  std::set<int> distinct(words.begin(), words.end()), banks;
  for (int w : distinct) banks.insert(w % kBanks);
  return banks.size() == distinct.size();
}

// 16-byte accesses of one warp (word offsets of each float4): one wavefront when the distinct
// float4s are at most 8 (128 bytes) and on distinct groups of 4 banks, so however the hardware
// splits the warp, no two distinct addresses share a bank.
bool float4s_conflict_free(const std::vector<int>& words) {
  std::set<int> distinct(words.begin(), words.end()), quads;
  for (int w : distinct) {
    if (w % 4 != 0) return false;  // a float4 load must be 16-byte aligned
    quads.insert(w / 4 % (kBanks / 4));
  }
  return quads.size() == distinct.size();
}

template <class Cfg>
void every_element_of_c_has_one_owner() {
  std::vector<int> owners(Cfg::kBM * Cfg::kBN, 0);
  for (int tid = 0; tid < Cfg::kThreads; ++tid)
    for (int i = 0; i < Cfg::kMi; ++i)
      for (int r = 0; r < 4; ++r)
        for (int j = 0; j < Cfg::kNi; ++j)
          for (int q = 0; q < 4; ++q) {
            const At e = Cfg::c_element(tid, i, r, j, q);
            ASSERT_TRUE(e.row >= 0 && e.row < Cfg::kBM && e.col >= 0 && e.col < Cfg::kBN) << name<Cfg>();
            ++owners[e.row * Cfg::kBN + e.col];
          }
  for (int x = 0; x < Cfg::kBM * Cfg::kBN; ++x) ASSERT_EQ(owners[x], 1) << name<Cfg>() << " element " << x;
}

// Every (row, col) of a rows x cols slice copied exactly once; the copies' shared words distinct.
template <class Cfg, class Map, class Shared>
void copies_cover_once(int copies, int rows, int cols, int width, Map map, Shared shared, const char* what) {
  std::vector<int> count(rows * cols, 0);
  std::set<int> words;
  for (int tid = 0; tid < Cfg::kThreads; ++tid)
    for (int p = 0; p < copies; ++p) {
      const At x = map(tid, p);
      ASSERT_TRUE(x.row >= 0 && x.row < rows && x.col >= 0 && x.col + width <= cols && x.col % width == 0)
          << name<Cfg>() << " " << what;
      for (int w = 0; w < width; ++w) ++count[x.row * cols + x.col + w];
      EXPECT_TRUE(words.insert(shared(x)).second) << name<Cfg>() << " " << what << ": two copies to one place";
    }
  for (int x = 0; x < rows * cols; ++x) ASSERT_EQ(count[x], 1) << name<Cfg>() << " " << what << " element " << x;
}

template <class Cfg>
void each_slice_is_copied_once_where_the_kernel_steps() {
  copies_cover_once<Cfg>(Cfg::kACopies, Cfg::kBM, Cfg::kBK, 1, Cfg::a_copy, Cfg::a_shared, "A");
  copies_cover_once<Cfg>(Cfg::kBCopies16, Cfg::kBK, Cfg::kBN, 4, Cfg::b_copy16, Cfg::b_shared, "B (float4)");
  copies_cover_once<Cfg>(Cfg::kBCopies4, Cfg::kBK, Cfg::kBN, 1, Cfg::b_copy4, Cfg::b_shared, "B (scalar)");
  EXPECT_EQ(Cfg::kACopies, Cfg::kAPasses * Cfg::kBK / 8) << name<Cfg>();
  for (int tid = 0; tid < Cfg::kThreads; ++tid) {  // SliceCopier's steps from copy 0
    const At a0 = Cfg::a_copy(tid, 0), b16 = Cfg::b_copy16(tid, 0), b4 = Cfg::b_copy4(tid, 0);
    for (int g = 0; g < Cfg::kBK / 8; ++g)
      for (int p = 0; p < Cfg::kAPasses; ++p) {
        const At x = Cfg::a_copy(tid, g * Cfg::kAPasses + p);
        ASSERT_TRUE(x.row == a0.row + p * Cfg::kCopyRows && x.col == a0.col + 8 * g) << name<Cfg>();
      }
    for (int p = 0; p < Cfg::kBCopies16; ++p)
      ASSERT_TRUE(Cfg::b_copy16(tid, p).row == b16.row + p * Cfg::kBStep16 && Cfg::b_copy16(tid, p).col == b16.col);
    for (int p = 0; p < Cfg::kBCopies4; ++p)
      ASSERT_TRUE(Cfg::b_copy4(tid, p).row == b4.row + p * Cfg::kBStep4 && Cfg::b_copy4(tid, p).col == b4.col);
  }
  EXPECT_LE(Cfg::kSharedBytes, 227 * 1024) << name<Cfg>() << ": a block's dynamic shared memory on sm_90";
  EXPECT_LE(Cfg::kMinBlocks * (Cfg::kSharedBytes + 1024), 228 * 1024) << name<Cfg>() << ": kMinBlocks fit an SM";
}

// The float4 a thread reads at step kk holds exactly the A (B) elements its block row (column) needs.
template <class Cfg>
void reads_find_what_the_owner_multiplies() {
  for (int tid = 0; tid < Cfg::kThreads; ++tid)
    for (int kk = 0; kk < Cfg::kBK; ++kk)
      for (int q = 0; q < 4; ++q) {
        for (int i = 0; i < Cfg::kMi; ++i)
          ASSERT_EQ(Cfg::a_read(tid, kk, i) + q, Cfg::a_shared({Cfg::c_element(tid, i, q, 0, 0).row, kk}))
              << name<Cfg>();
        for (int j = 0; j < Cfg::kNi; ++j)
          ASSERT_EQ(Cfg::b_read(tid, kk, j) + q, Cfg::b_shared({kk, Cfg::c_element(tid, 0, 0, j, q).col}))
              << name<Cfg>();
      }
}

template <class Cfg>
void no_warp_access_has_a_bank_conflict() {
  for (int warp = 0; warp < Cfg::kThreads / 32; ++warp) {
    auto lanes = [&](auto word) {
      std::vector<int> w;
      for (int lane = 0; lane < 32; ++lane) w.push_back(word(warp * 32 + lane));
      return w;
    };
    for (int p = 0; p < Cfg::kACopies; ++p)
      EXPECT_TRUE(words_conflict_free(lanes([&](int t) { return Cfg::a_shared(Cfg::a_copy(t, p)); })))
          << name<Cfg>() << " A store " << p;
    for (int p = 0; p < Cfg::kBCopies4; ++p)
      EXPECT_TRUE(words_conflict_free(lanes([&](int t) { return Cfg::b_shared(Cfg::b_copy4(t, p)); })))
          << name<Cfg>() << " scalar B store " << p;
    for (int p = 0; p < Cfg::kBCopies16; ++p)  // 512 contiguous bytes: checked a phase of 8 lanes at a time
      for (int phase = 0; phase < 4; ++phase) {
        std::vector<int> w = lanes([&](int t) { return Cfg::b_shared(Cfg::b_copy16(t, p)); });
        EXPECT_TRUE(float4s_conflict_free({w.begin() + 8 * phase, w.begin() + 8 * phase + 8})) << name<Cfg>();
      }
    for (int kk = 0; kk < Cfg::kBK; ++kk) {
      for (int i = 0; i < Cfg::kMi; ++i)
        EXPECT_TRUE(float4s_conflict_free(lanes([&](int t) { return Cfg::a_read(t, kk, i); })))
            << name<Cfg>() << " A load kk " << kk << " block " << i;
      for (int j = 0; j < Cfg::kNi; ++j)
        EXPECT_TRUE(float4s_conflict_free(lanes([&](int t) { return Cfg::b_read(t, kk, j); })))
            << name<Cfg>() << " B load kk " << kk << " block " << j;
    }
  }
}

template <class F, class... Cfg>
void for_each_registered(std::tuple<Cfg...>*, F f) {
  (f(static_cast<Cfg*>(nullptr)), ...);
}
template <class F>
void for_each_registered(F f) {
  for_each_registered(static_cast<Registered*>(nullptr), f);
}

}  // namespace

TEST(TunedSgemmLayout, EveryElementOfCHasOneOwner) {
  for_each_registered([](auto* c) { every_element_of_c_has_one_owner<std::remove_pointer_t<decltype(c)>>(); });
}

TEST(TunedSgemmLayout, EachSliceIsCopiedOnceWhereTheKernelSteps) {
  for_each_registered(
      [](auto* c) { each_slice_is_copied_once_where_the_kernel_steps<std::remove_pointer_t<decltype(c)>>(); });
}

TEST(TunedSgemmLayout, ReadsFindWhatTheOwnerMultiplies) {
  for_each_registered([](auto* c) { reads_find_what_the_owner_multiplies<std::remove_pointer_t<decltype(c)>>(); });
}

TEST(TunedSgemmLayout, NoWarpAccessHasABankConflict) {
  for_each_registered([](auto* c) { no_warp_access_has_a_bank_conflict<std::remove_pointer_t<decltype(c)>>(); });
}

// The checks can fail: a layout without the padding of A^T's rows conflicts on its stores.
TEST(TunedSgemmLayout, TheConflictCheckCatchesUnpaddedRows) {
  std::vector<int> unpadded;
  for (int lane = 0; lane < 32; ++lane) unpadded.push_back((lane % 8) * 128 + lane / 8);  // 8 k x 4 m, stride 128
  EXPECT_FALSE(words_conflict_free(unpadded));
  EXPECT_FALSE(float4s_conflict_free({0, 32, 64, 96}));  // four float4s on banks 0-3
  EXPECT_TRUE(float4s_conflict_free({0, 0, 4, 4, 8, 28}));
}
