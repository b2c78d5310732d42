#include <gtest/gtest.h>

#include "harness/cpu_search.hpp"
#include "harness/expression.hpp"
#include "harness/formats.hpp"
#include "oracle_check.hpp"
#include "real_model.hpp"
#include "test_models.hpp"

using namespace distancies;
using namespace distancies::testing;

struct CpuCase {
  std::int64_t rows;
  int dim;
  int k;
  int zero_rows;
  int duplicates;
};

class CpuSearchVsOracle : public ::testing::TestWithParam<CpuCase> {};

TEST_P(CpuSearchVsOracle, SequentialEqualsOracle) {
  const CpuCase c = GetParam();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Model m = random_model({c.rows, c.dim, seed, c.zero_rows, c.duplicates});
  // The query is row 0 when there are ties to exercise, else a fresh random vector.
  std::vector<float> q = c.duplicates ? std::vector<float>(m.row(0), m.row(0) + c.dim) : random_query(c.dim, seed);
  const float qn = vector_norm(q.data(), c.dim);
  expect_matches_oracle(m, q.data(), sequential_search(m, q.data(), qn, c.k), c.k);
  const std::vector<std::int32_t> exclude = {0, static_cast<std::int32_t>(c.rows - 1)};
  expect_matches_oracle(m, q.data(), sequential_search(m, q.data(), qn, c.k, exclude), c.k, exclude);
}

INSTANTIATE_TEST_SUITE_P(Shapes, CpuSearchVsOracle,
                         ::testing::Values(CpuCase{2000, 50, 10, 0, 0}, CpuCase{1500, 300, 10, 0, 0},
                                           CpuCase{1001, 301, 25, 0, 0}, CpuCase{5, 300, 10, 0, 0},
                                           CpuCase{700, 300, 10, 20, 0}, CpuCase{900, 64, 10, 0, 30}));

TEST(CpuSearch, TiesComeInRowOrder) {
  Model m = random_model({400, 16, 3, 0, 20});
  std::vector<float> q(m.row(0), m.row(0) + 16);
  auto hits = sequential_search(m, q.data(), vector_norm(q.data(), 16), 10);
  ASSERT_EQ(hits.size(), 10u);
  EXPECT_EQ(hits[0].row, 0);
  for (int i = 1; i < 10; ++i) EXPECT_EQ(hits[i].row, 13 * i) << "duplicates of row 0 must follow in row order";
}

TEST(CpuSearch, ZeroRowsScoreZero) {
  Model m = random_model({50, 8, 4, 5, 0});
  auto sims = oracle_similarities(m, m.row(1));
  EXPECT_EQ(sims[3], 0.0);
  EXPECT_EQ(sims[10], 0.0);
}

TEST(CpuSearch, DropExcluded) {
  std::vector<Hit> ranked = {{4, 0.9f}, {7, 0.8f}, {1, 0.7f}, {2, 0.6f}};
  auto out = drop_excluded(ranked, {7, 2}, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].row, 4);
  EXPECT_EQ(out[1].row, 1);
}

TEST(RealGlove, KingMinusManPlusWomanIsQueen) {
  const std::string path = real_model_path();
  if (path.empty()) GTEST_SKIP() << "real GloVe model absent: run scripts/fetch_glove.sh";
  Model m = load_model(path);
  Query q = make_query(m, "king - man + woman");
  auto hits = sequential_search(m, q.vector.data(), q.norm, 5, q.word_rows);
  bool found = false;
  for (const Hit& h : hits) found |= m.words[h.row] == "queen";
  EXPECT_TRUE(found) << "queen not in the top 5 of king - man + woman";
  Query f = make_query(m, "france");
  auto near = sequential_search(m, f.vector.data(), f.norm, 10, f.word_rows);
  bool europe = false;
  for (const Hit& h : near)
    europe |= m.words[h.row] == "belgium" || m.words[h.row] == "spain" || m.words[h.row] == "french";
  EXPECT_TRUE(europe) << "france's neighbours look wrong";
  expect_matches_oracle(m, q.vector.data(), hits, 5, q.word_rows);
}
