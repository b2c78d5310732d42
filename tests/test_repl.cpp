// The REPL protocol and batch files (harness/cli/repl.hpp) without a model: what each line
// becomes, and one error line per bad line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/repl.hpp"
#include "runtime/error.hpp"

using namespace distancies;
using namespace distancies::cli;

namespace {

struct Recorder {
  IsWord is_word;
  std::vector<std::string> queries;
  std::vector<std::vector<BatchLine>> batches;
  std::vector<std::string> files;
  std::string errors;
  int run(const std::string& input) {
    ReplActions a;
    a.is_word = is_word;
    a.query = [&](const std::string& t, bool cpu) {
      if (t == "bad") throw Error("unknown word: 'bad'");
      queries.push_back(t + (cpu ? " [cpu]" : ""));
    };
    a.batch = [&](const std::vector<BatchLine>& b) {
      batches.push_back(b);
      return 0;
    };
    a.batch_file = [&](const std::string& p) {
      files.push_back(p);
      return 1;
    };
    char* buf = nullptr;
    std::size_t len = 0;
    a.errors = open_memstream(&buf, &len);
    std::istringstream in(input);
    const int failed = run_repl(in, a);
    std::fclose(a.errors);
    errors.assign(buf, len);
    std::free(buf);
    return failed;
  }
};

}  // namespace

TEST(Repl, TheStudysProtocolLines) {
  Recorder r;
  EXPECT_EQ(r.run("bottle 0\nsnake 1\nking - queen ! 0\n\n   \nword\r\n"), 0);
  EXPECT_EQ(r.queries, (std::vector<std::string>{"bottle", "snake [cpu]", "king - queen !", "word"}));
  EXPECT_EQ(r.errors, "");
}

TEST(Repl, BlocksAndBatchFiles) {
  Recorder r;
  EXPECT_EQ(r.run(":begin\nking\n\nqueen 1\r\n:end\n:batch words.txt\n"), 1);
  ASSERT_EQ(r.batches.size(), 1u);
  ASSERT_EQ(r.batches[0].size(), 3u);  // the blank line too: the batch counts it
  EXPECT_EQ(r.batches[0][0].text, "king");
  EXPECT_EQ(r.batches[0][0].line, 2);
  EXPECT_EQ(r.batches[0][1].text, "");
  EXPECT_EQ(r.batches[0][2].text, "queen 1");
  EXPECT_EQ(r.files, (std::vector<std::string>{"words.txt"}));
}

TEST(Repl, EveryBadLineIsOneErrorLineAndCounted) {
  Recorder r;
  EXPECT_EQ(r.run("bad 0\n:end\nking 0\n:begin\nqueen\n"), 3);
  EXPECT_EQ(r.queries, (std::vector<std::string>{"king"}));
  EXPECT_EQ(r.errors,
            "distancies: error: unknown word: 'bad'\n"
            "distancies: error: line 2: ':end' without ':begin'\n"
            "distancies: error: input ended inside a ':begin' block\n");
}

TEST(BatchFile, KeepsEveryLineAndItsNumber) {
  std::istringstream in("king\n# a comment\n\n  queen  \t\r\nking - man + woman\n");
  const auto lines = parse_batch(in);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[3].line, 4);
  EXPECT_EQ(lines[3].text, "  queen  \t");
  EXPECT_EQ(lines[4].text, "king - man + woman");
  EXPECT_THROW(read_batch_file("/nonexistent/batch.txt"), Error);
}

namespace {

// A vocabulary of the awkward words of GloVe 6B and friends.
const std::vector<std::string> kOdd = {"#", "#tag", "\"",       "-",   "+",    "!",    "'",
                                       "0", "1",    "new york", "# x", "king", "queen"};

bool odd_word(std::string_view w) { return std::find(kOdd.begin(), kOdd.end(), w) != kOdd.end(); }

struct Classified {
  LineKind kind;
  std::string query;
};

Classified classify(const std::string& line, const IsWord& w = odd_word) {
  Classified c{};
  c.kind = classify_batch_line(line, w, c.query);
  return c;
}

}  // namespace

TEST(BatchFile, AWordIsAlwaysThatWord) {
  for (const std::string& w : kOdd) {
    const Classified c = classify(w);
    EXPECT_EQ(c.kind, LineKind::query) << w;
    EXPECT_EQ(c.query, w);
  }
  EXPECT_EQ(classify("  #tag \t").query, "#tag");  // trimmed, then still a word
  EXPECT_EQ(classify("  #tag \t").kind, LineKind::query);
}

TEST(BatchFile, CommentsAndBlanksAreNotWords) {
  EXPECT_EQ(classify("#not a word").kind, LineKind::comment);
  EXPECT_EQ(classify("   # indented comment").kind, LineKind::comment);
  EXPECT_EQ(classify("#tag", IsWord{}).kind, LineKind::comment);  // no model: nothing is a word
  EXPECT_EQ(classify("").kind, LineKind::blank);
  EXPECT_EQ(classify(" \t ").kind, LineKind::blank);
  const Classified e = classify("  king - queen  ");
  EXPECT_EQ(e.kind, LineKind::query);
  EXPECT_EQ(e.query, "king - queen");
}

TEST(Repl, EveryWordIsAskableWithOrWithoutTheFlag) {
  for (const std::string& w : kOdd)
    for (const std::string& flag : {std::string(), std::string(" 0"), std::string(" 1")}) {
      std::string text;
      bool cpu = true;
      ASSERT_TRUE(split_flag(w + flag + "\r\n", text, cpu, odd_word));
      EXPECT_EQ(text, w) << "line '" << w << flag << "'";
      EXPECT_EQ(cpu, flag == " 1") << "line '" << w << flag << "'";
    }
}

TEST(Repl, ExpressionsAndTheStudysTerminatorStillWork) {
  std::string text;
  bool cpu = false;
  ASSERT_TRUE(split_flag("king - queen ! 0", text, cpu, odd_word));
  EXPECT_EQ(text, "king - queen !");
  EXPECT_FALSE(cpu);
  ASSERT_TRUE(split_flag("  king + \"new york\"   1 ", text, cpu, odd_word));
  EXPECT_EQ(text, "king + \"new york\"");
  EXPECT_TRUE(cpu);
  EXPECT_FALSE(split_flag(" \t\r\n", text, cpu, odd_word));
}

TEST(Repl, ProtocolLinesAskTheVocabulary) {
  Recorder r;
  r.is_word = odd_word;
  EXPECT_EQ(r.run("! 0\n0 1\n# 0\n#\n:begin\n#\n# comment\n:end\n"), 0);
  EXPECT_EQ(r.queries, (std::vector<std::string>{"!", "0 [cpu]", "#", "#"}));
  ASSERT_EQ(r.batches.size(), 1u);
  EXPECT_EQ(r.batches[0].size(), 2u);
}
