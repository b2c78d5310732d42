#include "harness/formats/io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

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
    fail(path,
         std::to_string(rows) + " rows is more than the 2147483647 (2^31-1) rows supported (row indices are int32)");
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
  if (fseeko(f_, static_cast<off_t>(offset), SEEK_SET) != 0)
    fail(path_, std::string("cannot seek: ") + std::strerror(errno));
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

void read_parallel(const std::string& path, std::uint64_t offset, void* dst, std::uint64_t bytes, std::size_t chunk,
                   unsigned readers, const ChunkDone& fn, const char* what) {
  if (chunk == 0) throw Error("read_parallel: chunk size 0");
  const std::uint64_t chunks = (bytes + chunk - 1) / chunk;
  readers = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(readers, chunks)));
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr first;
  std::mutex mu;
  auto work = [&](unsigned r) {
    int fd = -1;
    try {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
      for (std::uint64_t c; !stop.load(std::memory_order_relaxed) && (c = next.fetch_add(1)) < chunks;) {
        const std::uint64_t at = c * chunk;
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, bytes - at));
        auto* out = static_cast<unsigned char*>(dst) + at;
        for (std::size_t done = 0; done < n;) {
          const ssize_t got = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + at + done));
          if (got < 0 && errno == EINTR) continue;
          if (got < 0) fail(path, std::string("read error: ") + std::strerror(errno));
          if (got == 0)
            fail(path, std::string("truncated: expected ") + std::to_string(offset + bytes) + " bytes (reading " +
                           what + ")");
          done += static_cast<std::size_t>(got);
        }
        if (fn) fn(r, at, out, n);
      }
    } catch (...) {
      stop = true;
      std::lock_guard<std::mutex> lock(mu);
      if (!first) first = std::current_exception();
    }
    if (fd >= 0) ::close(fd);
  };
  std::vector<std::thread> pool;
  for (unsigned r = 1; r < readers; ++r) pool.emplace_back(work, r);
  work(0);
  for (auto& t : pool) t.join();
  if (first) std::rethrow_exception(first);
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
