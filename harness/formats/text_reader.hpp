// Buffered reading of text models in blocks of whole lines, and the "word v1 ... vN" line grammar.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "harness/formats/io.hpp"

namespace distancies::fmt {

// Yields the file as consecutive blocks of whole lines (about kChunkBytes each; a block ends
// after a '\n' or at end of file). A UTF-8 byte-order mark at the start is dropped.
class BlockReader {
 public:
  BlockReader(InFile& file, const Progress& progress, std::size_t chunk_bytes = kChunkBytes);
  bool next(std::string_view& block);
  std::uint64_t bytes_done() const { return done_; }

 private:
  InFile& file_;
  const Progress& progress_;
  std::size_t chunk_;
  std::vector<char> buf_;
  std::size_t carry_ = 0;  // bytes of an unfinished line kept at the front of buf_
  std::size_t consumed_ = 0;
  std::uint64_t done_ = 0;
  bool first_ = true;
  bool eof_ = false;
};

// Splits a block into lines without their '\n'.
class LineCursor {
 public:
  explicit LineCursor(std::string_view block) : rest_(block) {}
  bool next(std::string_view& line) {
    if (rest_.empty()) return false;
    std::size_t nl = rest_.find('\n');
    if (nl == std::string_view::npos) {
      line = rest_;
      rest_ = {};
    } else {
      line = rest_.substr(0, nl);
      rest_.remove_prefix(nl + 1);
    }
    return true;
  }

 private:
  std::string_view rest_;
};

inline bool is_sep(char c) { return c == ' ' || c == '\t'; }

// Drops trailing spaces, tabs and the '\r' of CRLF.
inline std::string_view trim_right(std::string_view s) {
  while (!s.empty() && (is_sep(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Number of trailing tokens that parse as floats, leaving at least one token for the word.
int count_trailing_numbers(std::string_view line);

// Splits "word v1 ... vN": takes exactly n values from the end (single space/tab separators),
// the word is everything before. Returns an empty string on success, else what is wrong.
std::string split_row(std::string_view line, int n, std::string_view& word, float* values);

}  // namespace distancies::fmt
