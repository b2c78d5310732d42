// The batch exactness rule: every query of a batch equals the fp64 oracle's top k and, bit for
// bit, what the one-query `fused` pipeline returns alone.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/gpu_search.hpp"
#include "oracle_check.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies::testing {

struct Batch {
  std::vector<float> q;  // packed
  std::vector<float> norms;
};

// Query by query: the oracle's top k, and exactly what `fused` returns alone.
inline void expect_batch_exact(const Model& m, const DeviceModel& dm, const Batch& b,
                               const std::vector<std::vector<Hit>>& got, int k) {
  GpuSearcher one(dm, &m);
  ASSERT_EQ(got.size(), b.norms.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("query " + std::to_string(i));
    const float* q = b.q.data() + i * m.dim;
    expect_matches_oracle(m, q, got[i], k);
    const auto ref = one.search(pipeline("fused"), q, b.norms[i], k);
    ASSERT_EQ(got[i].size(), ref.size());
    for (std::size_t r = 0; r < ref.size(); ++r) {
      EXPECT_EQ(got[i][r].row, ref[r].row) << "rank " << r;
      EXPECT_EQ(got[i][r].sim, ref[r].sim) << "rank " << r << ": not fused's fp32 similarity";
    }
  }
}

}  // namespace distancies::testing
