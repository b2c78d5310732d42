#include "harness/cli/repl.hpp"

#include <cstdio>
#include <fstream>

#include "runtime/error.hpp"

namespace distancies::cli {

namespace {

void drop_line_end(std::string& s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n')) s.pop_back();
}

std::string trimmed(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

bool word(const IsWord& is_word, const std::string& s) { return is_word && !s.empty() && is_word(s); }

}  // namespace

std::vector<BatchLine> parse_batch(std::istream& in) {
  std::vector<BatchLine> lines;
  std::string s;
  for (int n = 1; std::getline(in, s); ++n) {
    drop_line_end(s);
    lines.push_back({n, s});
  }
  return lines;
}

std::vector<BatchLine> read_batch_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open batch file '" + path + "'");
  auto lines = parse_batch(in);
  if (in.bad()) throw Error("error reading batch file '" + path + "'");
  return lines;
}

LineKind classify_batch_line(const std::string& text, const IsWord& is_word, std::string& query) {
  // A word first: `#`, `#tag`, `"` and `-` are words of GloVe, not comments or bad expressions.
  if (word(is_word, text)) {
    query = text;
    return LineKind::query;
  }
  query = trimmed(text);
  if (query.empty()) return LineKind::blank;
  if (word(is_word, query)) return LineKind::query;
  return query[0] == '#' ? LineKind::comment : LineKind::query;
}

bool split_flag(std::string line, std::string& text, bool& cpu, const IsWord& is_word) {
  drop_line_end(line);
  const std::string t = trimmed(line);
  if (t.empty()) return false;
  cpu = false;
  bool flagged = false;
  std::string before;  // the text before a trailing flag
  const std::size_t sp = t.find_last_of(" \t");
  if (sp != std::string::npos && (t.substr(sp + 1) == "0" || t.substr(sp + 1) == "1")) {
    flagged = true;
    before = trimmed(t.substr(0, sp));
  }
  // `WORD FLAG` always means the word, even when `WORD FLAG` is itself a word: the study's form.
  if (flagged && word(is_word, before)) {
    text = before;
    cpu = t.back() == '1';
    return true;
  }
  for (const std::string& whole : {line, t})
    if (word(is_word, whole)) {
      text = whole;
      return true;
    }
  text = flagged ? before : t;
  cpu = flagged && t.back() == '1';
  return true;
}

int run_repl(std::istream& in, const ReplActions& act) {
  std::string line, text;
  bool cpu = false;
  int failed = 0, n = 0;
  std::vector<BatchLine> block;
  bool in_block = false;
  while (std::getline(in, line)) {
    ++n;
    try {
      std::string cmd = line;
      while (!cmd.empty() && (cmd.back() == '\r' || cmd.back() == ' ')) cmd.pop_back();
      if (cmd == ":begin") {
        in_block = true;
        block.clear();
      } else if (cmd == ":end") {
        if (!in_block) throw Error("line " + std::to_string(n) + ": ':end' without ':begin'");
        in_block = false;
        failed += act.batch(block);
      } else if (in_block) {
        std::string raw = line;  // every line: the batch classifies and counts it
        drop_line_end(raw);
        block.push_back({n, raw});
      } else if (cmd.rfind(":batch ", 0) == 0) {
        failed += act.batch_file(cmd.substr(7));
      } else if (split_flag(line, text, cpu, act.is_word)) {
        act.query(text, cpu);
      }
    } catch (const Error& e) {
      ++failed;
      std::fprintf(act.errors, "distancies: error: %s\n", e.what());
    }
  }
  if (in_block) {
    ++failed;
    std::fprintf(act.errors, "distancies: error: input ended inside a ':begin' block\n");
  }
  return failed;
}

}  // namespace distancies::cli
