// Reading and writing every model format a user of the study has (docs/formats.md).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "harness/expression.hpp"
#include "runtime/model.hpp"

namespace distancies {

enum class Format { Auto, GloveText, StudyText, StudySplit, Word2VecBinary, Native };

const char* format_name(Format f);
Format parse_format(const std::string& name);  // "auto", "glove", "study-text", "study-split", "word2vec", "native"

// Called now and then while reading: (bytes done, bytes total).
using Progress = std::function<void(std::uint64_t, std::uint64_t)>;

// Receives a native model's vector section as it is read, from the reading threads, chunk by
// chunk in any order (every chunk whole rows, padding zeroed): the GPU upload overlapped with
// the read (harness/model_upload.hpp). Other formats are assembled on the host first
// and do not call it.
struct VectorSink {
  virtual ~VectorSink() = default;
  // Before the first chunk: the model's shape and how many threads will call chunk().
  virtual void begin(std::int64_t rows, int dim, int ld, unsigned readers) = 0;
  // `bytes` of rows starting `offset` bytes into the vector section; `reader` < readers.
  virtual void chunk(unsigned reader, std::uint64_t offset, const void* data, std::size_t bytes) = 0;
  // After the last chunk (not called when the read fails).
  virtual void end() = 0;
};

struct LoadOptions {
  Format format = Format::Auto;
  VectorSink* sink = nullptr;  // native models only; see VectorSink
  // Skip bad rows (NaN/Inf, zero vectors, duplicated words) instead of failing; counts reported.
  bool skip_bad_rows = false;
  bool allow_zero_vectors = true;  // zero rows are legal (similarity 0); false makes them errors
  Progress progress;
  // Native models only: rows [first_row, last_row) alone (last_row -1: to the end), every other
  // row's vector left unread (a rank reading only its shard; docs/scale.md). Other formats: an error.
  std::int64_t first_row = 0;
  std::int64_t last_row = -1;
};

struct LoadReport {
  std::int64_t skipped_nonfinite = 0;
  std::int64_t skipped_duplicates = 0;
  std::int64_t zero_vectors = 0;         // zero rows seen (kept, or skipped when disallowed)
  std::int64_t skipped_empty_words = 0;  // rows whose word is empty (e.g. a blank keys line)
  // Native models: wall time of the vector section's read (sink included) and of the rest
  // (header, vocabulary, norms, validation), and the reading threads.
  double vectors_ms = 0;
  double rest_ms = 0;
  std::uint64_t vector_bytes = 0;
  unsigned readers = 0;
};

// What Format::Auto reads `path` as (docs/formats.md, "Detection"); throws like load_model.
Format detect_format(const std::string& path);

// Throws distancies::Error with one clear line ("FILE:LINE: what is wrong") on bad input.
// The result is always sorted byte-wise with norms computed, whatever the input order.
Model load_model(const std::string& path, const LoadOptions& opt = {}, LoadReport* report = nullptr);

// The native format: header, vocabulary, norms, 64-byte aligned rows of ld floats.
void save_native(const Model& m, const std::string& path);

// A native model's vocabulary (checked as load_model checks it) without its vectors: a row is read
// from the file when a query names it. What a rank that holds only its shard looks words up in.
class NativeVocabulary final : public WordSource {
 public:
  explicit NativeVocabulary(const std::string& path);
  std::int64_t rows() const { return static_cast<std::int64_t>(words_.size()); }
  int dim() const override { return dim_; }
  std::int64_t find(std::string_view word) const override;
  const std::string& word(std::int64_t row) const override { return words_.at(static_cast<std::size_t>(row)); }
  void read_row(std::int64_t row, float* out) const override;

 private:
  std::string path_;
  int dim_ = 0, ld_ = 0;
  std::uint64_t vectors_at_ = 0;
  std::vector<std::string> words_;
};

// Sorts rows by word (byte-wise), fails on duplicates unless skipping; computes norms.
void finalize_model(Model& m, const LoadOptions& opt, LoadReport* report);

}  // namespace distancies
