// Shared by the fuzz targets (tests/fuzz/fuzz_*.cpp, docs/hardening.md): inputs written to files
// in a per-process folder (the readers take paths, as users give them), and the one rule every
// target checks: bad input is a distancies::Error, never a crash, a hang or another exception.
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/formats.hpp"
#include "runtime/error.hpp"

namespace fuzz {

inline const std::string& folder() {
  static const std::string dir = [] {
    std::string d = "/tmp/distancies-fuzz-" + std::to_string(::getpid());
    std::string cmd = "mkdir -p " + d;
    if (std::system(cmd.c_str()) != 0) std::abort();
    return d;
  }();
  return dir;
}

// Writes bytes to folder()/name and returns the path.
inline std::string write(const std::string& name, const std::uint8_t* data, std::size_t size) {
  const std::string path = folder() + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

// Loads `path` as `format` with small limits; an Error is the expected outcome of bad input.
inline void load(const std::string& path, distancies::Format format) {
  distancies::LoadOptions opt;
  opt.format = format;
  try {
    const distancies::Model m = distancies::load_model(path, opt);
    // What loaded must be consistent: sorted unique words, one norm per row.
    for (std::size_t i = 1; i < m.words.size(); ++i)
      if (!(m.words[i - 1] < m.words[i])) std::abort();
    if (m.norms.size() != m.words.size()) std::abort();
  } catch (const distancies::Error&) {
  }
  opt.skip_bad_rows = true;
  try {
    distancies::load_model(path, opt);
  } catch (const distancies::Error&) {
  }
}

}  // namespace fuzz
