// The posting-list study's data as its variants see it: an inverted index (list i holds the
// sorted doc ids of term i) and a query (up to kMaxTerms term ids). The file readers and writers
// are the harness's (harness/intersect/index.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace distancies::intersect {

constexpr int kMaxTerms = 5;  // the study's queries name at most 5 terms

// A view of one sorted posting list.
struct ListView {
  const std::uint32_t* ids = nullptr;
  std::size_t size = 0;
  const std::uint32_t* begin() const { return ids; }
  const std::uint32_t* end() const { return ids + size; }
};

struct PostingIndex {
  std::vector<std::uint32_t> ids;         // every list, concatenated
  std::vector<std::uint64_t> offsets{0};  // list i is ids[offsets[i], offsets[i+1])
  std::uint32_t max_id = 0;               // largest id anywhere (0 for an index of empty lists)

  std::size_t lists() const { return offsets.size() - 1; }
  std::size_t length(std::size_t i) const { return offsets[i + 1] - offsets[i]; }
  ListView list(std::size_t i) const { return {ids.data() + offsets[i], length(i)}; }
  // Appends a list (must be strictly increasing; throws Error otherwise).
  void add(const std::vector<std::uint32_t>& list);
  double mean_length() const { return lists() ? double(ids.size()) / double(lists()) : 0.0; }
};

// What reading an index found besides errors. Empty lists are kept (a query naming one has an
// empty answer) and counted here.
// Why a list is not strictly increasing ("duplicate id 7", "ids not increasing (3 after 9)"),
// with *at the position; empty when it is.
std::string order_problem(const std::vector<std::uint32_t>& l, std::size_t* at);

struct Query {
  std::vector<std::uint32_t> terms;  // as written (1..kMaxTerms ids)
  int line = 0;                      // 1-based line in its file
};

std::vector<std::uint32_t> terms_by_length(const PostingIndex& index, const Query& q);

// Bytes of the lists a query touches (each named list read once).
std::uint64_t touched_bytes(const PostingIndex& index, const Query& q);

}  // namespace distancies::intersect
