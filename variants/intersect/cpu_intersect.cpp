#include "variants/intersect/cpu_intersect.hpp"

#include <algorithm>
#include <iterator>

namespace distancies::intersect {

HashTables build_hash_tables(const PostingIndex& index) {
  HashTables h;
  h.max_id = index.max_id;
  h.starts.assign(index.lists() * (kHashBuckets + 1), 0);
  for (std::size_t l = 0; l < index.lists(); ++l) {
    const ListView v = index.list(l);
    std::uint32_t* s = h.starts.data() + l * (kHashBuckets + 1);
    std::size_t i = 0;
    for (int b = 0; b <= kHashBuckets; ++b) {
      while (i < v.size && static_cast<int>(hash_bucket(v.ids[i], h.max_id)) < b) ++i;
      s[b] = static_cast<std::uint32_t>(i);
    }
  }
  return h;
}

Lists lists_of(const PostingIndex& index, const Query& q) {
  Lists l;
  for (std::uint32_t t : terms_by_length(index, q)) l.push_back(index.list(t));
  return l;
}

std::vector<std::uint32_t> oracle_intersect(const Lists& lists) {
  if (lists.empty()) return {};
  std::vector<std::uint32_t> acc(lists[0].begin(), lists[0].end()), next;
  for (std::size_t i = 1; i < lists.size(); ++i) {
    next.clear();
    std::set_intersection(acc.begin(), acc.end(), lists[i].begin(), lists[i].end(), std::back_inserter(next));
    acc.swap(next);
  }
  return acc;
}

std::vector<std::uint32_t> svs_serial(const Lists& lists) {
  if (lists.empty()) return {};
  std::vector<std::uint32_t> acc(lists[0].begin(), lists[0].end());
  for (std::size_t s = 1; s < lists.size() && !acc.empty(); ++s) {
    std::size_t keep = 0, j = 0;
    const ListView l = lists[s];
    for (std::size_t i = 0; i < acc.size() && j < l.size; ++i) {  // zipper: both cursors only move forward
      while (j < l.size && l.ids[j] < acc[i]) ++j;
      if (j < l.size && l.ids[j] == acc[i]) acc[keep++] = acc[i];
    }
    acc.resize(keep);
  }
  return acc;
}

std::vector<std::uint32_t> adp_serial(const Lists& lists) {
  std::vector<std::uint32_t> out;
  if (lists.empty()) return out;
  std::vector<std::size_t> cur(lists.size(), 0);
  for (std::uint32_t e : lists[0]) {
    bool found = true;
    for (std::size_t s = 1; s < lists.size() && found; ++s) {
      const ListView l = lists[s];
      while (cur[s] < l.size && l.ids[cur[s]] < e) ++cur[s];
      if (cur[s] == l.size) return out;  // this list has nothing left: no later id can match
      found = l.ids[cur[s]] == e;
    }
    if (found) out.push_back(e);
  }
  return out;
}

std::vector<std::uint32_t> hash_serial(const Lists& lists, const std::vector<std::uint32_t>& terms,
                                       const HashTables& h) {
  std::vector<std::uint32_t> out;
  if (lists.empty()) return out;
  for (std::uint32_t e : lists[0]) {
    bool found = true;
    const std::uint32_t b = hash_bucket(e, h.max_id);
    for (std::size_t s = 1; s < lists.size() && found; ++s) {
      const std::uint32_t* t = h.of(terms[s]);
      const std::uint32_t* lo = lists[s].ids + t[b];
      const std::uint32_t* hi = lists[s].ids + t[b + 1];
      const std::uint32_t* p = std::lower_bound(lo, hi, e);
      found = p != hi && *p == e;
    }
    if (found) out.push_back(e);
  }
  return out;
}

}  // namespace distancies::intersect
