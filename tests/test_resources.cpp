// Resources and their failures: every allocation failure, ours (device, page-locked) or a
// library's (cuBLAS, a CUDA call), is the one OutOfMemory type; an owner that meets one part-way
// (model upload, a searcher's workspace, a batch pass) frees everything it took; the batch
// splitter recovers from any of them. The launch arithmetic is checked here too. The first
// tests run on the CPU; the GPU ones skip, visibly, without a GPU.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "harness/embeddings/batch_search.hpp"
#include "harness/embeddings/gpu_search.hpp"
#include "oracle_check.hpp"
#include "runtime/cublas_check.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/device_model.hpp"
#include "runtime/launch.hpp"
#include "test_models.hpp"
#include "variants/embeddings/registry.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Cancels a pending injected failure however the test ends.
struct NoInjectionAfter {
  ~NoInjectionAfter() { inject_allocation_failure(-1); }
};

}  // namespace

TEST(Launch, Arithmetic) {
  static_assert(ceil_div(0, 256) == 0 && ceil_div(1, 256) == 1 && ceil_div(256, 256) == 1 && ceil_div(257, 256) == 2);
  static_assert(round_up(300, 8) == 304 && round_up(304, 8) == 304 && round_up(0, 4) == 0);
  static_assert(ceil_div(5000000000LL, 256) == 19531250LL, "64-bit counts stay 64-bit");
  EXPECT_EQ(blocks_for(0, 256), 0u);
  EXPECT_EQ(blocks_for(257, 256), 2u);
  EXPECT_EQ(blocks_for(2196016LL * 300, 256), 2573457u);  // 658,804,800 elements
  EXPECT_THROW(blocks_for(1LL << 45, 32), Error);
#if defined(DISTANCIES_DEBUG_SYNC) && DISTANCIES_DEBUG_SYNC
  EXPECT_TRUE(kDebugSync) << "built with DISTANCIES_DEBUG_SYNC: every launch synchronises";
#else
  EXPECT_FALSE(kDebugSync) << "a default build must not synchronise after every launch";
#endif
}

TEST(OutOfMemory, CudaAllocationErrorsAreOutOfMemory) {
  try {
    CUDA_CHECK(cudaErrorMemoryAllocation);
    FAIL() << "no throw";
  } catch (const OutOfMemory& e) {
    EXPECT_TRUE(starts_with(e.what(), "GPU out of memory: cudaErrorMemoryAllocation at ")) << e.what();
  }
  try {
    CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "no throw";
  } catch (const OutOfMemory& e) {
    FAIL() << "not an allocation failure: " << e.what();
  } catch (const Error& e) {
    EXPECT_TRUE(starts_with(e.what(), "CUDA error: cudaErrorInvalidValue")) << e.what();
  }
}

TEST(OutOfMemory, CublasAllocationFailuresAreOutOfMemory) {
  try {
    cublas_check(CUBLAS_STATUS_ALLOC_FAILED, "cublasGemmEx");
    FAIL() << "no throw";
  } catch (const OutOfMemory& e) {
    EXPECT_TRUE(starts_with(e.what(), "GPU out of memory: cuBLAS, in cublasGemmEx")) << e.what();
  }
  try {
    cublas_check(CUBLAS_STATUS_INVALID_VALUE, "cublasGemmEx");
    FAIL() << "no throw";
  } catch (const OutOfMemory& e) {
    FAIL() << "not an allocation failure: " << e.what();
  } catch (const Error& e) {
    EXPECT_TRUE(starts_with(e.what(), "cuBLAS: CUBLAS_STATUS_INVALID_VALUE")) << e.what();
  }
  EXPECT_NO_THROW(cublas_check(CUBLAS_STATUS_SUCCESS, "nothing"));
}

// The injected failure takes the real failure's path (no GPU needed: it fires before cudaMalloc).
TEST(OutOfMemory, InjectedFailuresNameWhatAndHowMuch) {
  NoInjectionAfter cleanup;
  inject_allocation_failure(0);
  try {
    DeviceBuffer b(3u << 20, "a test buffer");
    FAIL() << "no throw";
  } catch (const OutOfMemory& e) {
    EXPECT_TRUE(starts_with(e.what(), "GPU out of memory: a test buffer needs 3.0 MiB")) << e.what();
  }
  inject_allocation_failure(0);
  try {
    PinnedBuffer b(100, "a staging buffer");
    FAIL() << "no throw";
  } catch (const OutOfMemory& e) {
    EXPECT_TRUE(starts_with(e.what(), "out of page-locked host memory: a staging buffer needs 100 bytes")) << e.what();
  }
}

// ------------------------------------------------------------------ on the GPU

namespace {

std::size_t free_device_bytes() {
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

}  // namespace

TEST(OutOfMemory, AbsurdAllocationsLeakNothing) {
  DISTANCIES_REQUIRE_GPU();
  const std::size_t before = free_device_bytes();
  EXPECT_THROW(DeviceBuffer(std::size_t(1) << 50, "a petabyte"), OutOfMemory);
  EXPECT_THROW(PinnedBuffer(std::size_t(1) << 50, "a petabyte"), OutOfMemory);
  EXPECT_EQ(free_device_bytes(), before);
  DeviceBuffer small(1024, "small");  // the context is still usable
  EXPECT_NE(small.get(), nullptr);
}

// A failure at each allocation of the pinned upload (vectors, norms, two staging chunks):
// OutOfMemory, and the device memory it had taken is back.
TEST(OutOfMemory, FailedUploadLeaksNothing) {
  DISTANCIES_REQUIRE_GPU();
  NoInjectionAfter cleanup;
  const Model m = random_model({20000, 300, fresh_seed(), 0, 0});  // 24 MB of vectors
  upload_model(m, true);                                           // the first upload creates what the context keeps
  const std::size_t before = free_device_bytes();
  for (int i = 0; i < 4; ++i) {
    inject_allocation_failure(i);
    EXPECT_THROW(upload_model(m, true), OutOfMemory) << "allocation " << i;
    EXPECT_EQ(free_device_bytes(), before) << "allocation " << i;
  }
  inject_allocation_failure(-1);
  DeviceModel dm = upload_model(m, true);
  EXPECT_EQ(download_model(dm).norms, m.norms);
}

// A one-query search that fails at each of its allocations in turn: OutOfMemory, the searcher
// still answers exactly afterwards, and once it is gone its memory is back.
TEST(OutOfMemory, FailedSearchLeaksNothingAndRecovers) {
  DISTANCIES_REQUIRE_GPU();
  NoInjectionAfter cleanup;
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = random_model({30000, 100, seed, 0, 0});
  DeviceModel dm = upload_model(m);
  const std::vector<float> q = random_query(m.dim, seed);
  const float qn = vector_norm(q.data(), m.dim);
  for (const char* name : {"V1", "V2", "V4_cub_sort", "V4_radix_select", "fused", "fused_f16"}) {
    SCOPED_TRACE(name);
    const Pipeline& p = pipeline(name);
    GpuSearcher(dm, &m).search(p, q.data(), qn, 10);  // its first search prepares the 16-bit copies, once
    const std::size_t before = free_device_bytes();
    bool failed = true;
    for (int i = 0; failed && i < 40; ++i) {
      {
        GpuSearcher s(dm, &m);
        inject_allocation_failure(i);
        try {
          s.search(p, q.data(), qn, 10);
          failed = false;  // fewer than i + 1 allocations: every one has been failed once
        } catch (const OutOfMemory&) {
        }
        inject_allocation_failure(-1);
        expect_matches_oracle(m, q.data(), s.search(p, q.data(), qn, 10), 10);
      }
      EXPECT_EQ(free_device_bytes(), before) << "failure at allocation " << i;
    }
    EXPECT_FALSE(failed) << "still failing after 40 allocations";
  }
}

// The batch splitter handles every allocation failure of a pass, device or page-locked: the
// batch is halved and answered exactly. A searcher that cannot start leaks nothing either.
TEST(OutOfMemory, BatchSplitterHandlesEveryAllocationFailure) {
  DISTANCIES_REQUIRE_GPU();
  NoInjectionAfter cleanup;
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = random_model({20000, 64, seed, 0, 0});
  DeviceModel dm = upload_model(m);
  constexpr int kBatch = 64;
  std::vector<float> qs, norms;
  for (int i = 0; i < kBatch; ++i) {
    const auto q = random_query(m.dim, seed + 31u * i);
    qs.insert(qs.end(), q.begin(), q.end());
    norms.push_back(vector_norm(q.data(), m.dim));
  }
  BatchSearcher(dm).search(batch_pipeline("batch_tf32"), qs.data(), norms.data(), kBatch, 10);
  const std::size_t before = free_device_bytes();

  inject_allocation_failure(0);  // the searcher's first allocation
  EXPECT_THROW(BatchSearcher{dm}, OutOfMemory);
  EXPECT_EQ(free_device_bytes(), before);

  bool split = true;
  for (int i = 0; split && i < 40; ++i) {
    {
      BatchSearcher bs(dm);
      inject_allocation_failure(i);
      const auto got = bs.search(batch_pipeline("batch_tf32"), qs.data(), norms.data(), kBatch, 10);
      inject_allocation_failure(-1);
      split = bs.last_sub_batch() < kBatch;
      if (split) {
        EXPECT_EQ(bs.last_sub_batch(), kBatch / 2) << "failure at allocation " << i;
      }
      for (int b = 0; b < kBatch; b += 9) expect_matches_oracle(m, qs.data() + b * m.dim, got[b], 10);
    }
    EXPECT_EQ(free_device_bytes(), before) << "failure at allocation " << i;
  }
  EXPECT_FALSE(split) << "still splitting after 40 allocations";
}
