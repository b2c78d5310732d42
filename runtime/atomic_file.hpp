// A file written under a temporary name beside its target and renamed into place by commit():
// an error, an exception, or SIGINT / SIGTERM / SIGHUP while writing leaves no partial file
// under either name (docs/hardening.md). The model converter, the index writers and the
// results writers use it.
#pragma once
#include <cstddef>
#include <cstdio>
#include <string>

namespace distancies {

class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path, bool binary = true);
  ~AtomicFile();  // removes the temporary unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Throws Error "PATH: cannot write: REASON" (disk full, I/O error).
  void write(const void* data, std::size_t bytes);
  void write(const std::string& s) { write(s.data(), s.size()); }
  // Flushes, closes and renames the temporary to the target; throws on any failure.
  void commit();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_; }

 private:
  std::string path_, temp_;
  std::FILE* f_ = nullptr;
  int slot_ = -1;  // in the signal handler's list of temporaries to remove
  std::size_t written_ = 0;
  bool committed_ = false;
};

}  // namespace distancies
