// The text protocols of the command line, apart from what answers them (so they are tested and
// fuzzed without a model or a GPU): batch files and the REPL's lines.
#pragma once
#include <cstdio>
#include <functional>
#include <istream>
#include <string>
#include <vector>

namespace distancies::cli {

struct BatchLine {
  int line;          // 1-based, in its file or block
  std::string text;  // the word or expression
};

// The lines of a batch file: blank lines and lines starting with '#' skipped.
std::vector<BatchLine> read_batch_file(const std::string& path);
std::vector<BatchLine> parse_batch(std::istream& in);

// The study's protocol line: `WORD FLAG` or `EXPR ! FLAG`, FLAG 1 = also on the CPU. False for
// a blank line.
bool split_flag(std::string line, std::string& text, bool& cpu);

// What the REPL does with what it reads; each returns how many queries failed (or throws Error
// for its line).
struct ReplActions {
  std::function<void(const std::string& text, bool cpu)> query;
  std::function<int(const std::vector<BatchLine>& block)> batch;
  std::function<int(const std::string& path)> batch_file;
  std::FILE* errors = stderr;  // where the error lines go
};

// Reads the REPL protocol from `in` until it ends: `:begin` ... `:end` blocks, `:batch FILE`,
// and protocol lines. Errors are printed one line each ("distancies: error: ...") and counted;
// returns how many failed.
int run_repl(std::istream& in, const ReplActions& act);

}  // namespace distancies::cli
