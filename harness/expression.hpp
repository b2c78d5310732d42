// Queries: one word, or an expression of words joined by + and - (`king - man + woman`,
// or the study's form `king - queen !`).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/runtime/model.hpp"

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
};

// Looks every word up (unknown word -> Error naming it) and sums the signed row vectors in
// float32, as the study does. A zero result is an Error (cosine is undefined).
Query make_query(const Model& m, std::string_view text);

}  // namespace distancies
