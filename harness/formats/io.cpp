#include "harness/formats/io.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace distancies::fmt {

void fail(const std::string& path, const std::string& what) { throw Error(path + ": " + what); }

void fail_line(const std::string& path, std::int64_t line, const std::string& what) {
  throw Error(path + ":" + std::to_string(line) + ": " + what);
}

std::string quoted(std::string_view word) {
  std::string out = "'";
  std::size_t n = std::min<std::size_t>(word.size(), 60);
  for (std::size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(word[i]);
    if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (n < word.size()) out += "...";
  return out + "'";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

void check_row_count(const std::string& path, std::uint64_t rows) {
  if (rows > static_cast<std::uint64_t>(kMaxRows))
    fail(path, std::to_string(rows) + " rows is more than the 2147483647 (2^31-1) rows supported (row indices are int32)");
}

InFile::InFile(const std::string& path) : path_(path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail(path, "cannot open: is a directory");
  f_ = std::fopen(path.c_str(), "rb");
  if (!f_) fail(path, std::string("cannot open: ") + std::strerror(errno));
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InFile::~InFile() {
  if (f_) std::fclose(f_);
}

void InFile::seek(std::uint64_t offset) {
  if (fseeko(f_, static_cast<off_t>(offset), SEEK_SET) != 0) fail(path_, std::string("cannot seek: ") + std::strerror(errno));
  pos_ = offset;
}

std::size_t InFile::read_some(void* dst, std::size_t n) {
  std::size_t got = std::fread(dst, 1, n, f_);
  if (got < n && std::ferror(f_)) fail(path_, std::string("read error: ") + std::strerror(errno));
  pos_ += got;
  return got;
}

void InFile::read_exact(void* dst, std::size_t n, const char* what) {
  std::uint64_t start = pos_;
  if (read_some(dst, n) != n)
    fail(path_, std::string("truncated: expected ") + std::to_string(start + n) + " bytes (reading " + what +
                    "), file has " + std::to_string(size_));
}

void InFile::read_big(void* dst, std::uint64_t n, const char* what, const Progress& progress) {
  auto* out = static_cast<unsigned char*>(dst);
  while (n > 0) {
    std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(n, kChunkBytes));
    read_exact(out, piece, what);
    out += piece;
    n -= piece;
    if (progress) progress(pos_, size_);
  }
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

unsigned worker_count() {
  static const unsigned n = [] {
    unsigned h = std::thread::hardware_concurrency();
    if (const char* env = std::getenv("DISTANCIES_THREADS")) h = static_cast<unsigned>(std::atoi(env));
    return std::clamp(h, 1u, 8u);
  }();
  return n;
}

bool parse_float(std::string_view token, float& out) {
  const char* b = token.data();
  const char* e = b + token.size();
  if (e - b > 1 && *b == '+' && b[1] != '-') ++b;  // from_chars rejects an explicit plus sign
  if (b == e) return false;
  auto [ptr, ec] = std::from_chars(b, e, out);
  if (ec == std::errc() && ptr == e) return true;
  if (ec == std::errc::result_out_of_range && ptr == e) {
    // Subnormal/overflowing literals: strtod gives the nearest float (0 or inf) instead of failing.
    std::string copy(b, e);
    out = static_cast<float>(std::strtod(copy.c_str(), nullptr));
    return true;
  }
  return false;
}

void put_u32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put_u64(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t get_u32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t(p[i]) << (8 * i);
  return v;
}
std::uint64_t get_u64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(p[i]) << (8 * i);
  return v;
}

}  // namespace distancies::fmt
