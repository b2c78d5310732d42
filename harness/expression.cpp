#include "harness/expression.hpp"

#include <algorithm>
#include <cctype>

#include "runtime/error.hpp"

namespace distancies {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Splits on white space; a double-quoted run is one token (quotes removed, flagged).
struct Token {
  std::string text;
  bool quoted = false;
};

std::vector<Token> tokenize(std::string_view s) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (is_space(s[i])) {
      ++i;
      continue;
    }
    if (s[i] == '"') {
      std::size_t end = s.find('"', i + 1);
      if (end == std::string_view::npos) throw Error("unclosed quote in expression: " + std::string(s));
      out.push_back({std::string(s.substr(i + 1, end - i - 1)), true});
      i = end + 1;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && !is_space(s[j])) ++j;
    out.push_back({std::string(s.substr(i, j - i)), false});
    i = j;
  }
  return out;
}

}  // namespace

std::vector<Term> parse_expression(std::string_view text) {
  auto tokens = tokenize(text);
  if (!tokens.empty() && !tokens.back().quoted && tokens.back().text == "!") tokens.pop_back();
  if (tokens.empty()) throw Error("empty query: give a word or an expression such as 'king - man + woman'");
  std::vector<Term> terms;
  int pending = +1;
  bool have_op = true;  // a leading word needs no operator
  std::string last_word;
  for (const Token& t : tokens) {
    bool op = !t.quoted && (t.text == "+" || t.text == "-");
    if (!t.quoted && t.text == "!") throw Error("'!' may only end an expression");
    if (op) {
      if (have_op && !terms.empty()) throw Error("two operators in a row in expression: " + std::string(text));
      if (have_op && terms.empty() && pending == -1)
        throw Error("two operators in a row in expression: " + std::string(text));
      pending = t.text == "+" ? +1 : -1;
      have_op = true;
      continue;
    }
    if (t.text.empty()) throw Error("empty quoted word in expression: " + std::string(text));
    if (!have_op)
      throw Error("expected '+' or '-' between '" + last_word + "' and '" + t.text +
                  "' (write a word with spaces in double quotes)");
    terms.push_back({pending, t.text});
    last_word = t.text;
    pending = +1;
    have_op = false;
  }
  if (have_op) throw Error("expression ends with an operator: " + std::string(text));
  return terms;
}

namespace {

// The text read as an expression, when every word is known (for the note only).
bool reads_as_expression(const WordSource& m, std::string_view text) {
  try {
    const std::vector<Term> terms = parse_expression(text);
    if (terms.size() < 2) return false;
    for (const Term& t : terms)
      if (m.find(t.word) < 0) return false;
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

void ModelWords::read_row(std::int64_t row, float* out) const { std::copy(m.row(row), m.row(row) + m.dim, out); }

Query make_query(const Model& m, std::string_view text) { return make_query(ModelWords(m), text); }

Query make_query(const WordSource& m, std::string_view text) {
  Query q;
  q.text = std::string(text);
  const int dim = m.dim();
  q.vector.assign(static_cast<std::size_t>(dim), 0.0f);
  std::vector<float> v(static_cast<std::size_t>(dim));
  std::vector<Term> terms;
  // The whole text being a word wins over any reading as an expression, so `-`, `!`, `"` and
  // words with spaces are all askable alone.
  if (!text.empty() && m.find(text) >= 0) {
    terms.push_back({+1, std::string(text)});
    if (text.find(' ') != std::string_view::npos && reads_as_expression(m, text))
      q.note = "'" + q.text +
               "' is a word of the vocabulary and also an expression of its words: searched as the word" +
               " (quote each word for the expression)";
  } else {
    terms = parse_expression(text);
  }
  for (const Term& t : terms) {
    std::int64_t r = m.find(t.word);
    if (r < 0) throw Error("unknown word: '" + t.word + "'");
    m.read_row(r, v.data());
    for (int j = 0; j < dim; ++j) q.vector[j] += t.sign * v[j];
    if (std::find(q.word_rows.begin(), q.word_rows.end(), static_cast<std::int32_t>(r)) == q.word_rows.end())
      q.word_rows.push_back(static_cast<std::int32_t>(r));
  }
  q.norm = vector_norm(q.vector.data(), dim);
  if (!(q.norm > 0)) throw Error("'" + q.text + "' evaluates to the zero vector: cosine similarity is undefined");
  return q;
}

}  // namespace distancies
