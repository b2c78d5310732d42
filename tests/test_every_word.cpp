// Every word of the vocabulary is askable: a model whose words are the awkward tokens of GloVe
// (`#`, `"`, `-`, `!`, `0`, ...) asked one word a line, as a batch and as the REPL's protocol
// lines, on the CPU: one answer per line, and the batch summary's counts add up.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/cli/repl.hpp"
#include "harness/cli/session.hpp"
#include "harness/formats.hpp"
#include "tests/test_models.hpp"

using namespace distancies;
using namespace distancies::cli;

namespace {

const std::vector<std::string> kWords = {"king",     "queen",      "man",   "woman", "#",   "#tag", "\"", "-",
                                         "+",        "!",          "'",     "0",     "1",   "!!",   "--", "a\"b",
                                         "new york", "king - man", "# x y", ":end",  "x 0", "#0"};

// The vocabulary above, saved as a native model in the test's temporary folder.
std::string model_path() {
  static const std::string path = [] {
    distancies::testing::ModelSpec spec;
    spec.rows = static_cast<std::int64_t>(kWords.size());
    spec.dim = 16;
    Model m = distancies::testing::random_model(spec);
    std::vector<std::string> sorted = kWords;  // the native format keeps the vocabulary sorted
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) m.words[i] = sorted[i];
    const std::string p = ::testing::TempDir() + "every_word." + std::to_string(::getpid()) + ".dsv";
    save_native(m, p);
    return p;
  }();
  return path;
}

SearchOptions cpu_options() {
  SearchOptions o;
  o.model = model_path();
  o.device = "cpu";
  o.json = true;
  o.k = 3;
  return o;
}

std::vector<nlohmann::json> json_lines(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) v.push_back(nlohmann::json::parse(l));
  return v;
}

std::vector<BatchLine> lines_of(const std::string& text) {
  std::istringstream in(text);
  return parse_batch(in);
}

}  // namespace

TEST(EveryWord, EachWordOfTheVocabularyIsOneAnswerInABatch) {
  Session s(cpu_options());
  std::string text;
  for (const auto& w : kWords) text += w + "\n";
  ::testing::internal::CaptureStdout();
  const int failed = s.run_batch(lines_of(text), false);
  const auto out = json_lines(::testing::internal::GetCapturedStdout());
  EXPECT_EQ(failed, 0);
  ASSERT_EQ(out.size(), kWords.size() + 1);  // one answer a line, then the summary
  for (std::size_t i = 0; i < kWords.size(); ++i) {
    EXPECT_EQ(out[i]["line"], i + 1);
    EXPECT_EQ(out[i]["query"], kWords[i]);
    EXPECT_EQ(out[i]["results"].size(), 3u) << kWords[i];
  }
  const auto& sum = out.back()["summary"];
  EXPECT_EQ(sum["lines"], kWords.size());
  EXPECT_EQ(sum["queries"], kWords.size());
  EXPECT_EQ(sum["answered"], kWords.size());
  EXPECT_EQ(sum["skipped"], 0);
}

TEST(EveryWord, CommentsAndExpressionsStillWorkForNonWordsAndTheCountsAddUp) {
  Session s(cpu_options());
  const std::string text =
      "#\n"                   // the word
      "# a comment\n"         // not a word: a comment
      "\n"                    // blank
      "   \t\n"               // blank
      "king - man + woman\n"  // an expression
      "king - man\n"          // a word that is also an expression: the word
      "king + \"new york\" - \"-\"\n"
      "zzzz\n"        // an unknown word
      "\"unclosed\n"  // a bad expression
      "king - !\n"    // `!` only ends an expression
      "  #tag  \n";   // trimmed: the word
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int failed = s.run_batch(lines_of(text), false);
  const auto out = json_lines(::testing::internal::GetCapturedStdout());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(failed, 3);
  ASSERT_EQ(out.size(), 9u);  // 8 queries and the summary
  EXPECT_EQ(out[0]["query"], "#");
  EXPECT_EQ(out[1]["line"], 5);
  EXPECT_EQ(out[2]["query"], "king - man");
  EXPECT_TRUE(out[3].contains("results"));
  EXPECT_TRUE(out[4].contains("error"));
  EXPECT_EQ(out[7]["query"], "#tag");
  const auto& sum = out.back()["summary"];
  EXPECT_EQ(sum["lines"], 11);
  EXPECT_EQ(sum["blank"], 2);
  EXPECT_EQ(sum["comments"], 1);
  EXPECT_EQ(sum["skipped"], 3);
  EXPECT_EQ(sum["queries"], 8);
  EXPECT_EQ(sum["answered"], 5);
  EXPECT_EQ(sum["failed"], 3);
  EXPECT_EQ(sum["lines"].get<int>(), sum["skipped"].get<int>() + sum["queries"].get<int>());
  // One error line per bad line, each naming its line.
  for (const char* l : {"error: line 8: unknown word: 'zzzz'", "error: line 9: unclosed quote",
                        "error: line 10: expression ends with an operator"})
    EXPECT_NE(err.find(l), std::string::npos) << l << " in:\n" << err;
  std::size_t errors = 0;
  for (std::size_t p = err.find("distancies: error:"); p != std::string::npos;
       p = err.find("distancies: error:", p + 1))
    ++errors;
  EXPECT_EQ(errors, 3u);
}

TEST(EveryWord, EachWordIsOneAnswerAsAProtocolLine) {
  Session s(cpu_options());
  ReplActions act;
  act.query = [&](const std::string& text, bool cpu) { s.run(text, cpu); };
  act.batch = [&](const std::vector<BatchLine>& block) { return s.run_batch(block, false); };
  act.batch_file = [&](const std::string& path) { return s.run_batch(read_batch_file(path), false); };
  act.is_word = [&](std::string_view w) { return s.is_word(w); };
  std::string text;
  for (const auto& w : kWords) text += w + " 0\n" + w + " 1\n";
  text += "king - queen ! 0\n";
  ::testing::internal::CaptureStdout();
  std::istringstream in(text);
  const int failed = run_repl(in, act);
  const auto out = json_lines(::testing::internal::GetCapturedStdout());
  EXPECT_EQ(failed, 0);
  ASSERT_EQ(out.size(), 2 * kWords.size() + 1);
  for (std::size_t i = 0; i < kWords.size(); ++i) {
    EXPECT_EQ(out[2 * i]["query"], kWords[i]);
    EXPECT_FALSE(out[2 * i].contains("cpu") && out[2 * i]["cpu"].contains("same_rows_as_gpu"));
    EXPECT_EQ(out[2 * i + 1]["query"], kWords[i]);
  }
  EXPECT_EQ(out.back()["query"], "king - queen !");
}

TEST(EveryWord, AWordIsAskedAloneAsTheOneArgument) {
  Session s(cpu_options());
  for (const auto& w : kWords) {
    ::testing::internal::CaptureStdout();
    s.run(w, false);
    const auto out = json_lines(::testing::internal::GetCapturedStdout());
    ASSERT_EQ(out.size(), 1u) << w;
    EXPECT_EQ(out[0]["query"], w);
    EXPECT_EQ(out[0]["results"].size(), 3u) << w;
  }
}
