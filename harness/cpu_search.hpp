// CPU searches: the study's sequential search (the "CPU" column) and the fp64 oracle that
// every exactness test compares against.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/common/ranking.hpp"
#include "runtime/model.hpp"

namespace distancies {

struct Hit {
  std::int32_t row;
  float sim;
};

// Rows with norm 0 have similarity 0 (cosine is undefined there; 0 = "orthogonal").
// Both searches skip `exclude` rows and return min(k, rows - excluded) hits.

// One thread, float32 dot products, sim = dot / (|q| * norm[row]), top k kept by insertion
// into a sorted array: the study's sequentialSearch.
std::vector<Hit> sequential_search(const Model& m, const float* query, float query_norm, int k,
                                   const std::vector<std::int32_t>& exclude = {});

struct OracleHit {
  std::int32_t row;
  double sim;
};

// Every similarity in fp64 (norms recomputed in fp64 from the stored floats).
std::vector<double> oracle_similarities(const Model& m, const float* query);

// fp64 top k by (sim desc, row asc).
std::vector<OracleHit> oracle_search(const Model& m, const float* query, int k,
                                     const std::vector<std::int32_t>& exclude = {});

// Drops excluded rows from a ranked list and keeps the first k (used after a GPU top-(k+e)).
std::vector<Hit> drop_excluded(const std::vector<Hit>& ranked, const std::vector<std::int32_t>& exclude, int k);

}  // namespace distancies
