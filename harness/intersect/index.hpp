// The posting-list study's data: an inverted index (the study's binary format, little-endian
// uint32 [len][ids...] per list, list i is term i) and query files (one query per line, up to
// kMaxTerms term ids). Readers check what the study's loader trusted: ids strictly increasing,
// lengths inside the file, query terms that exist. Every bad input is one distancies::Error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "variants/intersect/posting_lists.hpp"

namespace distancies::intersect {

struct IndexReport {
  std::size_t empty_lists = 0;
  std::size_t bytes = 0;
};

// Throws Error naming the file, the list, the byte offset and what is wrong.
PostingIndex read_index(const std::string& path, IndexReport* report = nullptr);
PostingIndex parse_index(const std::string& name, const std::vector<unsigned char>& bytes,
                         IndexReport* report = nullptr);
void write_index(const std::string& path, const PostingIndex& index);

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
}  // namespace distancies::intersect
