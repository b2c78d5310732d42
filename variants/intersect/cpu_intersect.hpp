// The study's serial algorithms on the CPU and the oracle every variant is checked against.
// Each takes a query's lists shortest first (terms_by_length) and returns the common ids in
// increasing order.
#pragma once
#include <cstdint>
#include <vector>

#include "variants/intersect/posting_lists.hpp"

namespace distancies::intersect {

constexpr int kHashBuckets = 512;  // the study's Hash(512)

// The bucket of an id: the id range [0, max_id] cut into kHashBuckets equal slices, so a
// sorted list's ids of one bucket sit side by side and the table is kHashBuckets+1 offsets.
inline std::uint32_t hash_bucket(std::uint32_t id, std::uint32_t max_id) {
  return static_cast<std::uint32_t>(std::uint64_t(id) * kHashBuckets / (std::uint64_t(max_id) + 1));
}

// Per list, kHashBuckets+1 offsets (relative to the list's start) of each bucket's first id.
struct HashTables {
  std::vector<std::uint32_t> starts;  // lists * (kHashBuckets + 1)
  std::uint32_t max_id = 0;
  const std::uint32_t* of(std::size_t list) const { return starts.data() + list * (kHashBuckets + 1); }
};
HashTables build_hash_tables(const PostingIndex& index);

using Lists = std::vector<ListView>;
Lists lists_of(const PostingIndex& index, const Query& q);  // shortest first

// std::set_intersection chained over the lists: the oracle.
std::vector<std::uint32_t> oracle_intersect(const Lists& lists);

// SVS: the two shortest lists merged, then the survivors merged with each next list.
std::vector<std::uint32_t> svs_serial(const Lists& lists);
// ADP (element at a time): each id of the shortest list looked for in every other list, a
// cursor per list that only moves forward; stops when any list runs out.
std::vector<std::uint32_t> adp_serial(const Lists& lists);
// Hash(512): each id of the shortest list looked up in the other lists' buckets, then found by
// binary search inside the bucket. `terms` are the lists' term ids (shortest first).
std::vector<std::uint32_t> hash_serial(const Lists& lists, const std::vector<std::uint32_t>& terms,
                                       const HashTables& h);

}  // namespace distancies::intersect
