#include "harness/formats/text_reader.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace distancies::fmt {

BlockReader::BlockReader(InFile& file, const Progress& progress, std::size_t chunk_bytes)
    // No larger than the file (plus room for its last line): a small file gets a small buffer.
    : file_(file),
      progress_(progress),
      chunk_(
          std::max<std::size_t>(16, static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, file.size() + 16)))) {
  buf_.resize(chunk_);
}

bool BlockReader::next(std::string_view& block) {
  // Move the unfinished tail of the previous block to the front.
  if (consumed_ > 0) {
    std::memmove(buf_.data(), buf_.data() + consumed_, carry_);
    consumed_ = 0;
  }
  while (true) {
    if (eof_) {
      if (carry_ == 0) return false;
      block = std::string_view(buf_.data(), carry_);  // last line without '\n'
      consumed_ = carry_;
      carry_ = 0;
      return true;
    }
    if (buf_.size() - carry_ < chunk_ / 2) buf_.resize(buf_.size() * 2);  // a line longer than a chunk
    std::size_t got = file_.read_some(buf_.data() + carry_, buf_.size() - carry_);
    if (first_) {
      first_ = false;
      if (got >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) {
        std::memmove(buf_.data(), buf_.data() + 3, got - 3);
        got -= 3;
      }
    }
    if (got == 0) eof_ = true;
    std::size_t filled = carry_ + got;
    done_ = file_.pos();
    if (progress_) progress_(done_, file_.size());
    const char* nl = nullptr;
    for (std::size_t i = filled; i > carry_; --i)  // last newline among the new bytes
      if (buf_[i - 1] == '\n') {
        nl = buf_.data() + i - 1;
        break;
      }
    if (!nl) {
      carry_ = filled;
      continue;
    }
    std::size_t len = static_cast<std::size_t>(nl - buf_.data()) + 1;
    block = std::string_view(buf_.data(), len);
    consumed_ = len;
    carry_ = filled - len;
    return true;
  }
}

int count_trailing_numbers(std::string_view line) {
  int count = 0;
  std::size_t end = line.size();
  while (true) {
    std::size_t start = end;
    while (start > 0 && !is_sep(line[start - 1])) --start;
    if (start == 0) return count;  // the first token is always the word
    float v;
    if (!parse_float(line.substr(start, end - start), v)) return count;
    ++count;
    end = start - 1;
  }
}

std::string split_row(std::string_view line, int n, std::string_view& word, float* values) {
  std::size_t end = line.size();
  for (int k = n - 1; k >= 0; --k) {
    std::size_t start = end;
    while (start > 0 && !is_sep(line[start - 1])) --start;
    if (start == 0) return "expected " + std::to_string(n) + " values, found " + std::to_string(n - 1 - k);
    std::string_view tok = line.substr(start, end - start);
    if (!parse_float(tok, values[k]))
      return "non-numeric value " + quoted(tok) + " (expected a word then " + std::to_string(n) + " numbers)";
    end = start - 1;
  }
  word = line.substr(0, end);
  return {};
}

}  // namespace distancies::fmt
