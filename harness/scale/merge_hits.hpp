// Merging the top k of disjoint row sets (streamed chunks, GPU shards) into the top k of their
// union. Each part is exact and ordered by ranks_before (similarity descending, row ascending)
// with global rows, so the merged list is the one search over all rows would give, ties across
// parts included: the order is total and does not depend on where a row was scored.
#pragma once
#include <algorithm>
#include <iterator>
#include <vector>

#include "harness/cpu_search.hpp"
#include "kernels/common/ranking.hpp"

namespace distancies {

inline bool hit_before(const Hit& a, const Hit& b) { return ranks_before(a.sim, a.row, b.sim, b.row); }

// acc := the best k of acc and part (both ordered).
inline void merge_top_k(std::vector<Hit>& acc, const std::vector<Hit>& part, int k) {
  std::vector<Hit> out;
  out.reserve(acc.size() + part.size());
  std::merge(acc.begin(), acc.end(), part.begin(), part.end(), std::back_inserter(out), hit_before);
  if (out.size() > static_cast<std::size_t>(k)) out.resize(static_cast<std::size_t>(k));
  acc.swap(out);
}

// Rows of `hits` made global: + first.
inline void offset_rows(std::vector<Hit>& hits, std::int64_t first) {
  for (Hit& h : hits) h.row = static_cast<std::int32_t>(h.row + first);
}

}  // namespace distancies
