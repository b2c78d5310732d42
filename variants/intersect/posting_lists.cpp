#include "variants/intersect/posting_lists.hpp"

#include <algorithm>

#include "runtime/error.hpp"

namespace distancies::intersect {

std::string order_problem(const std::vector<std::uint32_t>& l, std::size_t* at) {
  for (std::size_t i = 1; i < l.size(); ++i)
    if (l[i] <= l[i - 1]) {
      *at = i;
      return l[i] == l[i - 1]
                 ? "duplicate id " + std::to_string(l[i])
                 : "ids not increasing (" + std::to_string(l[i]) + " after " + std::to_string(l[i - 1]) + ")";
    }
  return {};
}

void PostingIndex::add(const std::vector<std::uint32_t>& list) {
  std::size_t at = 0;
  const std::string p = order_problem(list, &at);
  if (!p.empty()) throw Error("list " + std::to_string(lists()) + ": " + p + " at position " + std::to_string(at));
  ids.insert(ids.end(), list.begin(), list.end());
  offsets.push_back(ids.size());
  if (!list.empty()) max_id = std::max(max_id, list.back());
}

std::vector<std::uint32_t> terms_by_length(const PostingIndex& index, const Query& q) {
  std::vector<std::uint32_t> t = q.terms;
  std::stable_sort(t.begin(), t.end(), [&](std::uint32_t a, std::uint32_t b) {
    return index.length(a) != index.length(b) ? index.length(a) < index.length(b) : a < b;
  });
  return t;
}

std::uint64_t touched_bytes(const PostingIndex& index, const Query& q) {
  std::uint64_t b = 0;
  for (std::uint32_t t : q.terms) b += 4 * index.length(t);
  return b;
}

}  // namespace distancies::intersect
