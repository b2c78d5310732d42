// The REPL protocol and batch files (harness/cli/repl.hpp) without a model: what each line
// becomes, and one error line per bad line.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/repl.hpp"
#include "harness/runtime/error.hpp"

using namespace distancies;
using namespace distancies::cli;

namespace {

struct Recorder {
  std::vector<std::string> queries;
  std::vector<std::vector<BatchLine>> batches;
  std::vector<std::string> files;
  std::string errors;
  int run(const std::string& input) {
    ReplActions a;
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
  EXPECT_EQ(r.run(":begin\nking\n\nqueen 1\n:end\n:batch words.txt\n"), 1);
  ASSERT_EQ(r.batches.size(), 1u);
  ASSERT_EQ(r.batches[0].size(), 2u);
  EXPECT_EQ(r.batches[0][0].text, "king");
  EXPECT_EQ(r.batches[0][0].line, 2);
  EXPECT_EQ(r.batches[0][1].text, "queen 1");
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

TEST(BatchFile, SkipsBlankAndCommentLinesAndKeepsLineNumbers) {
  std::istringstream in("king\n# a comment\n\n  queen  \t\r\nking - man + woman\n");
  const auto lines = parse_batch(in);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].line, 4);
  EXPECT_EQ(lines[1].text, "queen");
  EXPECT_EQ(lines[2].text, "king - man + woman");
  EXPECT_THROW(read_batch_file("/nonexistent/batch.txt"), Error);
}
