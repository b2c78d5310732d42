// Per-format readers and the shared sort/validate step (internal to harness/formats).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/formats.hpp"

namespace distancies::fmt {

// Rows as a reader collected them, in file order, before validation and sorting.
struct RawRows {
  std::vector<std::string> words;
  std::vector<const float*> rows;   // dim floats each, owned by the reader
  std::vector<std::int64_t> lines;  // 1-based source line of each row (text formats); empty otherwise
  int dim = 0;
};

// Validates rows (empty words, NaN/Inf, zero vectors, duplicates) per the options, sorts the
// survivors byte-wise and gathers them into a new model with norms computed. Errors name `path`.
Model assemble_model(RawRows& raw, const std::string& path, const LoadOptions& opt, LoadReport* report);

// The same on a model already in memory; rows are permuted only when not already sorted and
// valid. compute_norms=false keeps m.norms (permuted along). `kinds` (rows entries of
// row_kind(), or null): the rows' kinds already found by the reader, so the vectors are not
// read a second time.
void finalize_in_place(Model& m, const std::string& path, bool compute_norms, const LoadOptions& opt,
                       LoadReport* report, const std::vector<unsigned char>* kinds = nullptr,
                       bool sorted_unique = false);  // the reader checked the words sorted and unique

// What a row is: finite and not all zero (0), has a NaN or Inf (1), all zeros (2).
unsigned char row_kind(const float* v, int dim);
// A model flagged normalized must have unit rows (zero rows aside): one error line otherwise.
void check_unit_rows(const Model& m, const std::string& path);

// Text rows "word [norm] v1 ... vD": GloVe, the study's text format and word2vec text.
struct TextSpec {
  bool study = false;             // a stored norm precedes the values (checked, then dropped)
  bool header = false;            // first line is word2vec's "ROWS DIM"
  int dim = 0;                    // 0: from the first row
  std::int64_t header_rows = -1;  // rows the header announces, checked when >= 0
  const char* name = "glove";     // Model::format
};
Model load_text(const std::string& path, const TextSpec& spec, const LoadOptions& opt, LoadReport* report);
Model load_study_split(const std::string& path, const LoadOptions& opt, LoadReport* report);
Model load_word2vec(const std::string& path, const LoadOptions& opt, LoadReport* report);
Model load_native(const std::string& path, const LoadOptions& opt, LoadReport* report);

// "ROWS DIM": two unsigned decimal integers.
bool parse_word2vec_header(std::string_view line, std::uint64_t& rows, std::uint64_t& dim);

// study-text when the first number of each of the first lines is the norm of the others.
bool looks_like_study_text(const std::string& path);

// The keys/values pair of a study-split model named by either file; empty strings when `path`
// names neither a .keys file with a values sibling nor a .values file with a keys sibling.
struct SplitPaths {
  std::string keys, values;
};
SplitPaths split_paths(const std::string& path);

// Relative tolerance for stored norms (study-text, study-split) against the recomputed norm.
constexpr double kNormTolerance = 1e-3;
bool norm_matches(float stored, float computed, double tolerance = kNormTolerance);

}  // namespace distancies::fmt
