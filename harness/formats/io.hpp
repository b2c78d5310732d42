// File and threading helpers shared by the format readers (internal to harness/formats).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

#include "harness/formats.hpp"
#include "runtime/error.hpp"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the binary formats are read by reinterpreting little-endian floats; big-endian hosts are unsupported"
#endif

namespace distancies::fmt {

constexpr std::int64_t kMaxRows = 0x7FFFFFFF;   // row indices are int32 on the GPU
constexpr std::size_t kChunkBytes = 64u << 20;  // read size and progress granularity

[[noreturn]] void fail(const std::string& path, const std::string& what);
[[noreturn]] void fail_line(const std::string& path, std::int64_t line, const std::string& what);
std::string quoted(std::string_view word);  // 'word', shortened and with control bytes escaped
std::string number(double v);               // %.7g
void check_row_count(const std::string& path, std::uint64_t rows);

// A read-only file; every failure throws "PATH: ..." with the OS reason.
class InFile {
 public:
  explicit InFile(const std::string& path);
  ~InFile();
  InFile(const InFile&) = delete;
  InFile& operator=(const InFile&) = delete;

  const std::string& path() const { return path_; }
  std::uint64_t size() const { return size_; }
  std::uint64_t pos() const { return pos_; }
  void seek(std::uint64_t offset);
  // Reads up to n bytes; returns how many (short only at end of file).
  std::size_t read_some(void* dst, std::size_t n);
  // Reads exactly n bytes or throws "truncated".
  void read_exact(void* dst, std::size_t n, const char* what);
  // Large reads in kChunkBytes pieces, reporting progress against the file size.
  void read_big(void* dst, std::uint64_t n, const char* what, const Progress& progress);

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
};

bool file_exists(const std::string& path);

// Reads `bytes` at `offset` of `path` into dst with `readers` threads, each with its own file
// descriptor and positioned reads of `chunk` bytes (chunks interleaved across threads, so the
// file is read front to back). After each chunk: fn(reader, offset from dst, pointer, bytes).
// The first failure (read error, short file, or fn's exception) stops every thread and throws.
using ChunkDone = std::function<void(unsigned reader, std::uint64_t offset, unsigned char* data, std::size_t bytes)>;
void read_parallel(const std::string& path, std::uint64_t offset, void* dst, std::uint64_t bytes, std::size_t chunk,
                   unsigned readers, const ChunkDone& fn, const char* what);

// Worker threads for parsing, gathering and norms: hardware threads, capped at 8.
unsigned worker_count();
// Runs fn(begin, end) over [0, n) split into contiguous ranges, one per worker.
template <class Fn>
void parallel_for(std::int64_t n, Fn fn);

// Parses one whole token as a float ("nan"/"inf" included, a leading '+' accepted);
// false when the token is not entirely a number.
bool parse_float(std::string_view token, float& out);

void put_u32(unsigned char* p, std::uint32_t v);
void put_u64(unsigned char* p, std::uint64_t v);
std::uint32_t get_u32(const unsigned char* p);
std::uint64_t get_u64(const unsigned char* p);

}  // namespace distancies::fmt

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace distancies::fmt {

template <class Fn>
void parallel_for(std::int64_t n, Fn fn) {
  unsigned workers = worker_count();
  if (n < 4096 || workers <= 1) {
    if (n > 0) fn(std::int64_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  std::exception_ptr first;
  std::mutex mu;
  std::int64_t step = (n + workers - 1) / workers;
  for (std::int64_t b = 0; b < n; b += step) {
    std::int64_t e = b + step < n ? b + step : n;
    pool.emplace_back([=, &fn, &first, &mu] {
      try {
        fn(b, e);
      } catch (...) {  // an exception escaping a thread would terminate the process
        std::lock_guard<std::mutex> lock(mu);
        if (!first) first = std::current_exception();
      }
    });
  }
  for (auto& t : pool) t.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace distancies::fmt
