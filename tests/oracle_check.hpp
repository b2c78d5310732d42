// The one exactness rule every search is held to: the fp64 oracle's top k, allowing a
// different row only where the two rows' true similarities are a genuine near-tie.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "harness/cpu_search.hpp"

namespace distancies::testing {

constexpr double kSimTolerance = 1e-5;  // fp32 cosine of <= 12288 terms vs fp64: far inside this

inline void expect_matches_oracle(const Model& m, const float* query, const std::vector<Hit>& hits, int k,
                                  const std::vector<std::int32_t>& exclude = {}) {
  const auto oracle = oracle_search(m, query, k, exclude);
  const auto sims = oracle_similarities(m, query);
  ASSERT_EQ(hits.size(), oracle.size()) << "wrong number of results";
  std::set<std::int32_t> seen;
  for (std::size_t i = 0; i < hits.size(); ++i) {
    const Hit& h = hits[i];
    ASSERT_GE(h.row, 0);
    ASSERT_LT(h.row, m.rows);
    EXPECT_TRUE(seen.insert(h.row).second) << "row " << h.row << " returned twice";
    for (auto e : exclude) {
      EXPECT_NE(h.row, e) << "excluded row returned";
    }
    const double truth = sims[static_cast<std::size_t>(h.row)];
    EXPECT_NEAR(h.sim, truth, kSimTolerance) << "rank " << i << " row " << h.row << ": reported similarity is off";
    if (h.row != oracle[i].row) {
      EXPECT_NEAR(truth, oracle[i].sim, kSimTolerance)
          << "rank " << i << ": row " << h.row << " (" << truth << ") instead of row " << oracle[i].row << " ("
          << oracle[i].sim << ") is not a near-tie";
    }
  }
}

}  // namespace distancies::testing
