// The text protocols of the command line, apart from what answers them (so they are tested and
// fuzzed without a model or a GPU): batch files and the REPL's lines.
#pragma once
#include <cstdio>
#include <functional>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace distancies::cli {

struct BatchLine {
  int line;          // 1-based, in its file or block
  std::string text;  // the line as read, its line end (`\n`, `\r\n`) removed
};

// Whether a string is a word of the model's vocabulary (empty: no model, nothing is a word).
using IsWord = std::function<bool(std::string_view)>;

// Every line of a batch file, blank and comment lines included: what they are depends on the
// vocabulary (classify_batch_line), and they are counted in the batch's summary.
std::vector<BatchLine> read_batch_file(const std::string& path);
std::vector<BatchLine> parse_batch(std::istream& in);

enum class LineKind { query, blank, comment };

// What one batch line is (docs/formats.md, "Batch files and the REPL"): the line as read, or
// else the line trimmed of spaces and tabs, when it is a word of the vocabulary, is that word;
// otherwise a line of only spaces and tabs is blank, a line whose first other character is '#'
// a comment, and any other line, trimmed, an expression. `query` gets the word or expression.
LineKind classify_batch_line(const std::string& text, const IsWord& is_word, std::string& query);

// The study's protocol line: `WORD FLAG` or `EXPR ! FLAG`, FLAG 1 = also on the CPU. The text
// before a trailing flag, when it is a word, is that word (so `! 0`, `0 1`, `# 0` ask the words
// `!`, `0`, `#`); else the whole line, as read or trimmed, when it is a word (no flag: CPU off);
// else the text before the flag (or the line) is an expression. False for a blank line.
bool split_flag(std::string line, std::string& text, bool& cpu, const IsWord& is_word = {});

// What the REPL does with what it reads; each returns how many queries failed (or throws Error
// for its line).
struct ReplActions {
  std::function<void(const std::string& text, bool cpu)> query;
  std::function<int(const std::vector<BatchLine>& block)> batch;
  std::function<int(const std::string& path)> batch_file;
  IsWord is_word;              // the vocabulary, for protocol lines that are words
  std::FILE* errors = stderr;  // where the error lines go
};

// Reads the REPL protocol from `in` until it ends: `:begin` ... `:end` blocks, `:batch FILE`,
// and protocol lines. Errors are printed one line each ("distancies: error: ...") and counted;
// returns how many failed.
int run_repl(std::istream& in, const ReplActions& act);

}  // namespace distancies::cli
