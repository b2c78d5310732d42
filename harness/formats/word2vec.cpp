// word2vec: a "ROWS DIM" header line, then per row the word, a space and DIM little-endian
// float32 (binary) or DIM numbers (text). Binary rows may end with '\n' (the original tool
// writes one; others do not).
#include <algorithm>
#include <cctype>
#include <cstring>

#include "harness/formats/internal.hpp"
#include "harness/formats/text_reader.hpp"

namespace distancies::fmt {
namespace {

constexpr std::size_t kMaxWordBytes = 1 << 16;  // longer means this is not word2vec data

// Buffered byte access over an InFile, refilled kChunkBytes at a time.
class ByteReader {
 public:
  ByteReader(InFile& f, const Progress& progress)
      : f_(f),
        progress_(progress),
        buf_(static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, f.size() + 16))) {}
  int get() {
    if (pos_ == len_ && !refill()) return -1;
    return static_cast<unsigned char>(buf_[pos_++]);
  }
  int peek() {
    if (pos_ == len_ && !refill()) return -1;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  bool read(void* dst, std::size_t n) {
    auto* out = static_cast<char*>(dst);
    while (n > 0) {
      if (pos_ == len_ && !refill()) return false;
      std::size_t k = std::min(n, len_ - pos_);
      std::memcpy(out, buf_.data() + pos_, k);
      pos_ += k;
      out += k;
      n -= k;
    }
    return true;
  }

 private:
  bool refill() {
    len_ = f_.read_some(buf_.data(), buf_.size());
    pos_ = 0;
    if (progress_) progress_(f_.pos(), f_.size());
    return len_ > 0;
  }
  InFile& f_;
  const Progress& progress_;
  std::vector<char> buf_;
  std::size_t pos_ = 0, len_ = 0;
};

bool parse_count(std::string_view tok, std::uint64_t& out) {
  if (tok.empty() || tok.size() > 19) return false;
  out = 0;
  for (char c : tok) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

}  // namespace

bool parse_word2vec_header(std::string_view line, std::uint64_t& rows, std::uint64_t& dim) {
  line = trim_right(line);
  std::size_t sp = line.find_first_of(" \t");
  if (sp == std::string_view::npos) return false;
  std::string_view a = line.substr(0, sp), b = line.substr(sp + 1);
  while (!b.empty() && is_sep(b.front())) b.remove_prefix(1);
  return parse_count(a, rows) && parse_count(b, dim);
}

Model load_word2vec(const std::string& path, const LoadOptions& opt, LoadReport* report) {
  InFile file(path);
  if (file.size() == 0) fail(path, "empty file");
  // The header and enough of the first row to tell binary from text.
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), 1u << 20)), '\0');
  head.resize(file.read_some(head.data(), head.size()));
  const std::size_t start = head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a BOM, as text files may have
  std::size_t nl = head.find('\n', start);
  std::uint64_t rows = 0, dim = 0;
  if (nl == std::string::npos || !parse_word2vec_header(std::string_view(head).substr(start, nl - start), rows, dim))
    fail_line(path, 1, "expected a word2vec header line 'ROWS DIM'");
  if (rows == 0) fail_line(path, 1, "the header announces 0 rows");
  if (dim == 0 || dim > (1u << 24)) fail_line(path, 1, "the header announces dimension " + std::to_string(dim));
  check_row_count(path, rows);

  // Text rows: the line after the header is a word and `dim` numbers.
  std::string_view rest = std::string_view(head).substr(nl + 1);
  std::size_t nl2 = rest.find('\n');
  if (nl2 != std::string_view::npos || head.size() == file.size()) {
    std::string_view line = trim_right(rest.substr(0, nl2));
    std::vector<float> tmp(static_cast<std::size_t>(dim));
    std::string_view word;
    if (line.find('\0') == std::string_view::npos && split_row(line, static_cast<int>(dim), word, tmp.data()).empty()) {
      TextSpec spec;
      spec.header = true;
      spec.dim = static_cast<int>(dim);
      spec.header_rows = static_cast<std::int64_t>(rows);
      spec.name = "word2vec-text";
      return load_text(path, spec, opt, report);
    }
  }

  // Binary: each row needs at least a 1-byte word, a space and dim floats.
  const std::uint64_t header_bytes = nl + 1;
  const std::uint64_t minimum = header_bytes + rows * (2 + dim * 4);
  if (file.size() < minimum)
    fail(path, "truncated: expected at least " + std::to_string(minimum) + " bytes for " + std::to_string(rows) +
                   " rows of dimension " + std::to_string(dim) + ", file has " + std::to_string(file.size()));
  file.seek(header_bytes);
  ByteReader in(file, opt.progress);
  Model m;
  m.allocate(static_cast<std::int64_t>(rows), static_cast<int>(dim));
  std::string word;
  for (std::uint64_t r = 0; r < rows; ++r) {
    int c = in.get();
    while (c == '\n' || c == '\r' || c == ' ') c = in.get();  // separator left by the previous row
    word.clear();
    while (c != ' ' && c != -1) {
      word.push_back(static_cast<char>(c));
      if (word.size() > kMaxWordBytes)
        fail(path, "row " + std::to_string(r + 1) + ": word longer than 65536 bytes (not word2vec binary data?)");
      c = in.get();
    }
    if (c == -1 || !in.read(m.row(static_cast<std::int64_t>(r)), dim * 4))
      fail(path, "truncated: the header announces " + std::to_string(rows) + " rows, the file ends in row " +
                     std::to_string(r + 1) + " (file has " + std::to_string(file.size()) + " bytes)");
    m.words[r] = word;
  }
  for (int c = in.get(); c != -1; c = in.get())
    if (!std::isspace(c))
      fail(path,
           "data after the " + std::to_string(rows) + " rows the header announces (wrong row count in the header?)");
  m.format = "word2vec";
  finalize_in_place(m, path, true, opt, report);
  return m;
}

}  // namespace distancies::fmt
