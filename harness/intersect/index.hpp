// The posting-list study's data: an inverted index (the study's binary format, little-endian
// uint32 [len][ids...] per list, list i is term i) and query files (one query per line, up to
// kMaxTerms term ids). Readers check what the study's loader trusted: ids strictly increasing,
// lengths inside the file, query terms that exist. Every bad input is one distancies::Error.
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
struct IndexReport {
  std::size_t empty_lists = 0;
  std::size_t bytes = 0;
};

// Throws Error naming the file, the list, the byte offset and what is wrong.
PostingIndex read_index(const std::string& path, IndexReport* report = nullptr);
PostingIndex parse_index(const std::string& name, const std::vector<unsigned char>& bytes,
                         IndexReport* report = nullptr);
void write_index(const std::string& path, const PostingIndex& index);

struct Query {
  std::vector<std::uint32_t> terms;  // as written (1..kMaxTerms ids)
  int line = 0;                      // 1-based line in its file
};

struct QueryReport {
  std::size_t blank_lines = 0;  // skipped and counted
};

// One query per non-blank line: 1..kMaxTerms term ids separated by spaces or tabs. A term id
// not below `lists` (the index's list count) is an error naming the line.
std::vector<Query> read_queries(const std::string& path, std::size_t lists, QueryReport* report = nullptr);
std::vector<Query> parse_queries(const std::string& name, const std::string& text, std::size_t lists,
                                 QueryReport* report = nullptr);
void write_queries(const std::string& path, const std::vector<Query>& queries);

// The query's term ids ordered by list length, shortest first (ties by term id), as every
// algorithm of the study takes them.
std::vector<std::uint32_t> terms_by_length(const PostingIndex& index, const Query& q);

// Bytes of the lists a query touches (each named list read once).
std::uint64_t touched_bytes(const PostingIndex& index, const Query& q);

}  // namespace distancies::intersect
