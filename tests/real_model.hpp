// Where the real GloVe 6B 50d model lies (written by scripts/fetch_glove.sh), for tests that
// need real embeddings and skip without them.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

namespace distancies::test {

// $DISTANCIES_REAL_MODEL, else <source dir>/.cache/models/glove.6B.50d.w2v.bin.
inline std::string real_model_default_path() {
  if (const char* env = std::getenv("DISTANCIES_REAL_MODEL"); env && *env) return env;
#ifdef DISTANCIES_SOURCE_DIR
  std::filesystem::path root = DISTANCIES_SOURCE_DIR;
#else
  // This header lives in <source dir>/tests/.
  std::filesystem::path root = std::filesystem::path(__FILE__).parent_path().parent_path();
#endif
  return (root / ".cache" / "models" / "glove.6B.50d.w2v.bin").string();
}

// The path when the file exists, else "" (callers GTEST_SKIP naming real_model_default_path()).
inline std::string real_model_path() {
  std::string p = real_model_default_path();
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) ? p : std::string();
}

}  // namespace distancies::test

// The brief's spelling, at global scope too.
using distancies::test::real_model_path;
