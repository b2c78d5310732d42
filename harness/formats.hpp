// Reading and writing every model format a user of the study has (docs/formats.md).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "harness/runtime/model.hpp"

namespace distancies {

enum class Format { Auto, GloveText, StudyText, StudySplit, Word2VecBinary, Native };

const char* format_name(Format f);
Format parse_format(const std::string& name);  // "auto", "glove", "study-text", "study-split", "word2vec", "native"

// Called now and then while reading: (bytes done, bytes total).
using Progress = std::function<void(std::uint64_t, std::uint64_t)>;

struct LoadOptions {
  Format format = Format::Auto;
  // Skip bad rows (NaN/Inf, zero vectors, duplicated words) instead of failing; counts reported.
  bool skip_bad_rows = false;
  bool allow_zero_vectors = true;  // zero rows are legal (similarity 0); false makes them errors
  Progress progress;
};

struct LoadReport {
  std::int64_t skipped_nonfinite = 0;
  std::int64_t skipped_duplicates = 0;
  std::int64_t zero_vectors = 0;         // zero rows seen (kept, or skipped when disallowed)
  std::int64_t skipped_empty_words = 0;  // rows whose word is empty (e.g. a blank keys line)
};

// What Format::Auto reads `path` as (docs/formats.md, "Detection"); throws like load_model.
Format detect_format(const std::string& path);

// Throws distancies::Error with one clear line ("FILE:LINE: what is wrong") on bad input.
// The result is always sorted byte-wise with norms computed, whatever the input order.
Model load_model(const std::string& path, const LoadOptions& opt = {}, LoadReport* report = nullptr);

// The native format: header, vocabulary, norms, 64-byte aligned rows of ld floats.
void save_native(const Model& m, const std::string& path);

// Sorts rows by word (byte-wise), fails on duplicates unless skipping; computes norms.
void finalize_model(Model& m, const LoadOptions& opt, LoadReport* report);

}  // namespace distancies
