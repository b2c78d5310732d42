// The bytes a batch of queries must read, for the study's floor and the refusal of impossible
// figures (docs/intersection.md, "The floor"). A list named by several queries, or twice by one,
// counts once: the L2 may serve every read after the first, so a count per naming is no bound.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "variants/intersect/packed_lists.hpp"
#include "variants/intersect/posting_lists.hpp"

namespace distancies::intersect {

struct BatchBytes {
  std::uint64_t distinct = 0;           // every list some query names, once: the floor's bytes
  std::uint64_t distinct_shortest = 0;  // each query's shortest list, once: what every algorithm reads
  std::uint64_t per_query_sum = 0;      // every list once per query naming it (an L2 can beat it)
};

// Each query's shortest list (the fewest ids, the lowest term on a tie, as terms_by_length
// orders), once.
inline std::set<std::uint32_t> distinct_shortest_terms(const PostingIndex& index, const std::vector<Query>& queries) {
  std::set<std::uint32_t> shortest;
  for (const Query& q : queries) {
    const std::vector<std::uint32_t> by_length = terms_by_length(index, q);
    if (!by_length.empty()) shortest.insert(by_length[0]);
  }
  return shortest;
}

inline BatchBytes batch_bytes(const PostingIndex& index, const std::vector<Query>& queries) {
  std::set<std::uint32_t> all;
  BatchBytes b;
  for (const Query& q : queries) {
    b.per_query_sum += touched_bytes(index, q);
    for (std::uint32_t t : q.terms) all.insert(t);
  }
  for (std::uint32_t t : all) b.distinct += 4 * index.length(t);
  for (std::uint32_t t : distinct_shortest_terms(index, queries)) b.distinct_shortest += 4 * index.length(t);
  return b;
}

// What a row reading packed lists must read at least: each distinct shortest list's packed gaps
// and its blocks' first ids (the rest of its anchors and the other lists' bytes it may skip).
inline std::uint64_t packed_shortest_bytes(const PackedLists& p, const PostingIndex& index,
                                           const std::vector<Query>& queries) {
  std::uint64_t bytes = 0;
  for (std::uint32_t t : distinct_shortest_terms(index, queries)) bytes += 4 * (p.list_words(t) + p.blocks(t));
  return bytes;
}

}  // namespace distancies::intersect
