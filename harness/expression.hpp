// Queries: one word, or an expression of words joined by + and - (`king - man + woman`,
// or the study's form `king - queen !`).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/model.hpp"

namespace distancies {

struct Term {
  int sign = +1;  // +1 or -1
  std::string word;
};

// Operators are separate tokens; a word containing spaces is written in double quotes.
// A trailing `!` (the study's terminator) is accepted. Throws Error on empty input,
// dangling or doubled operators, two words with no operator between them, unclosed quotes.
std::vector<Term> parse_expression(std::string_view text);

struct Query {
  std::string text;
  std::vector<float> vector;            // dim floats
  float norm = 0;                       // fp64 norm rounded to float
  std::vector<std::int32_t> word_rows;  // rows of the expression's words (excluded by default)
  std::string note;                     // which reading was taken, when the text has two
};

// Where a query's words and their rows come from: a model in memory (ModelWords), or a native
// model's vocabulary with each row read from the file when a query names it (NativeVocabulary,
// harness/formats.hpp: a rank that holds only its shard).
struct WordSource {
  virtual ~WordSource() = default;
  virtual int dim() const = 0;
  virtual std::int64_t find(std::string_view word) const = 0;  // -1: absent
  virtual const std::string& word(std::int64_t row) const = 0;
  virtual void read_row(std::int64_t row, float* out) const = 0;  // dim floats
};

struct ModelWords final : WordSource {
  explicit ModelWords(const Model& model) : m(model) {}
  int dim() const override { return m.dim; }
  std::int64_t find(std::string_view w) const override { return m.find(w); }
  const std::string& word(std::int64_t row) const override { return m.words[static_cast<std::size_t>(row)]; }
  void read_row(std::int64_t row, float* out) const override;
  const Model& m;
};

// The text as people type it: when the whole text (spaces and operators included) is a word of
// the vocabulary, it is that word (GloVe 840B has words with spaces; GloVe 6B has `-`, `!`,
// `"`); otherwise it is an expression. When it is a word and also an expression of known words, `note` says the word
// was taken (quote the words, `"king" - "man"`, for the expression).
// Looks every word up (unknown word -> Error naming it) and sums the signed row vectors in
// float32, as the study does. A zero result is an Error (cosine is undefined).
Query make_query(const WordSource& words, std::string_view text);
Query make_query(const Model& m, std::string_view text);

}  // namespace distancies
