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

// The text as people type it: when the whole text (spaces and operators included) is a word of
// the vocabulary, it is that word (GloVe 840B has words with spaces; GloVe 6B has `-`, `!`,
// `"`); otherwise it is an expression. When it is a word and also an expression of known words, `note` says the word
// was taken (quote the words, `"king" - "man"`, for the expression).
// Looks every word up (unknown word -> Error naming it) and sums the signed row vectors in
// float32, as the study does. A zero result is an Error (cosine is undefined).
Query make_query(const Model& m, std::string_view text);

}  // namespace distancies
