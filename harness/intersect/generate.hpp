// Deterministic data sets for the posting-list study. Every generator is std::mt19937_64 from
// the stated seed, so the same arguments give the same bytes on every machine.
#pragma once
#include <cstdint>
#include <vector>

#include "harness/intersect/index.hpp"

namespace distancies::intersect {

struct DataSet {
  PostingIndex index;
  std::vector<Query> queries;
};

constexpr std::uint64_t kDefaultSeed = 20261123;

// The study's small set: 1,000 lists of 50-100 ids, 300 queries of 5 distinct terms. Ids are
// drawn from [0, 200) so that five-list intersections are often non-empty.
DataSet small_set(std::uint64_t seed = kDefaultSeed);

// GOV2-shaped: `lists` lists whose lengths follow a Zipf (1/rank) spread scaled to a mean of
// 19,899.4 ids, ids uniform in [0, 25,205,174] with the maximum present in the longest list,
// and `queries` queries of 2-5 distinct terms drawn uniformly. `scale` < 1 shrinks the lengths
// (tests); the shape stays.
struct Gov2Shape {
  std::size_t lists = 2000;
  std::size_t queries = 1000;
  double mean_length = 19899.4;
  std::uint32_t max_id = 25205174;
  double zipf_exponent = 1.0;
};
DataSet gov2_shaped(const Gov2Shape& shape = {}, std::uint64_t seed = kDefaultSeed);

// `n` distinct ids from [0, max_id], sorted.
std::vector<std::uint32_t> sorted_sample(std::size_t n, std::uint32_t max_id, std::uint64_t seed);

// Pairs of lists with |long| = ratio * |short| (for the time-vs-ratio plot): `queries` queries,
// each over its own two lists.
DataSet ratio_set(std::size_t short_len, int ratio, std::size_t queries, std::uint64_t seed = kDefaultSeed);

// `terms`-term queries over lists of about `len` ids (for the time-vs-query-length plot).
DataSet terms_set(int terms, std::size_t len, std::size_t queries, std::uint64_t seed = kDefaultSeed);

// The adversarial sets every variant must get exactly right; name -> data.
std::vector<std::pair<const char*, DataSet>> adversarial_sets();

}  // namespace distancies::intersect
