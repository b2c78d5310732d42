#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/expression.hpp"
#include "harness/synthetic.hpp"
#include "runtime/error.hpp"

using namespace distancies;
using ::testing::HasSubstr;

namespace {

void expect_error(const std::string& text, const std::string& fragment) {
  try {
    parse_expression(text);
    ADD_FAILURE() << "'" << text << "' parsed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(fragment)) << "for '" << text << "'";
  }
}

}  // namespace

TEST(Expression, SingleWord) {
  auto t = parse_expression("king");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].word, "king");
  EXPECT_EQ(t[0].sign, 1);
}

TEST(Expression, AnalogyAndStudyForm) {
  auto t = parse_expression("  king - man + woman ");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1].sign, -1);
  EXPECT_EQ(t[2].sign, 1);
  EXPECT_EQ(t[2].word, "woman");
  auto s = parse_expression("king - queen !");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].word, "queen");
  EXPECT_EQ(s[1].sign, -1);
}

TEST(Expression, ManyTermsLeadingSignQuotesAndHyphens) {
  auto t = parse_expression("- a + b - c + d - e + \"new york\" + well-known");
  ASSERT_EQ(t.size(), 7u);
  EXPECT_EQ(t[0].sign, -1);
  EXPECT_EQ(t[5].word, "new york");
  EXPECT_EQ(t[6].word, "well-known");
}

TEST(Expression, Errors) {
  expect_error("", "empty query");
  expect_error("   !", "empty query");
  expect_error("king -", "ends with an operator");
  expect_error("king - + man", "two operators");
  expect_error("- - king", "two operators");
  expect_error("king queen", "expected '+' or '-'");
  expect_error("king ! - man", "'!' may only end");
  expect_error("\"new york", "unclosed quote");
  expect_error("king + \"\"", "empty quoted word");
}

TEST(Expression, QueryVectorAndWordRows) {
  Model m = make_synthetic_model(50, 8);
  Query q = make_query(m, "king - man + woman");
  const auto king = m.find("king"), man = m.find("man"), woman = m.find("woman");
  for (int j = 0; j < m.dim; ++j) EXPECT_FLOAT_EQ(q.vector[j], m.row(king)[j] - m.row(man)[j] + m.row(woman)[j]);
  EXPECT_EQ(q.word_rows, (std::vector<std::int32_t>{static_cast<std::int32_t>(king), static_cast<std::int32_t>(man),
                                                    static_cast<std::int32_t>(woman)}));
  EXPECT_FLOAT_EQ(q.norm, vector_norm(q.vector.data(), m.dim));
}

TEST(Expression, UnknownWordAndZeroVector) {
  Model m = make_synthetic_model(50, 8);
  try {
    make_query(m, "king + qqqq");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown word: 'qqqq'"));
  }
  try {
    make_query(m, "king - king");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("zero vector"));
  }
}

TEST(Synthetic, DeterministicAndContainsStudyWords) {
  Model a = make_synthetic_model(100, 30, 7), b = make_synthetic_model(100, 30, 7),
        c = make_synthetic_model(100, 30, 8);
  for (const auto& w : study_words()) EXPECT_GE(a.find(w), 0) << w;
  EXPECT_TRUE(std::is_sorted(a.words.begin(), a.words.end()));
  bool differs = false;
  for (int r = 0; r < 100; ++r)
    for (int j = 0; j < 30; ++j) {
      EXPECT_EQ(a.row(r)[j], b.row(r)[j]);
      EXPECT_GE(a.row(r)[j], -1.0f);
      EXPECT_LE(a.row(r)[j], 1.0f);
      differs |= a.row(r)[j] != c.row(r)[j];
    }
  EXPECT_TRUE(differs) << "the seed changes nothing";
}

// Expressions as people type them: the whole text is a word when the vocabulary has it (with
// a note when it also reads as an expression), an expression otherwise.
TEST(Expression, WholeTextIsAWordWhenTheVocabularyHasIt) {
  Model m;
  m.allocate(4, 3);
  m.words = {"king", "king - man", "man", "woman"};  // sorted byte-wise
  for (std::int64_t r = 0; r < m.rows; ++r) {
    for (int j = 0; j < m.dim; ++j) m.row(r)[j] = float(r + 1) * (j == r % 3 ? 2.0f : 0.5f);
    m.norms[static_cast<std::size_t>(r)] = vector_norm(m.row(r), m.dim);
  }
  const Query word = make_query(m, "king - man");
  EXPECT_EQ(word.word_rows, (std::vector<std::int32_t>{1}));
  EXPECT_THAT(word.note, HasSubstr("searched as the word"));
  const Query expr = make_query(m, "man + woman");  // not a word: the expression, no note
  EXPECT_EQ(expr.word_rows, (std::vector<std::int32_t>{2, 3}));
  EXPECT_TRUE(expr.note.empty());
  const Query quoted = make_query(m, "\"king\" - \"man\"");  // quoted words: always the expression
  EXPECT_EQ(quoted.word_rows, (std::vector<std::int32_t>{0, 2}));
  EXPECT_TRUE(make_query(m, "king").note.empty());
}
