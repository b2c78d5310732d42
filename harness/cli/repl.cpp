#include "harness/cli/repl.hpp"

#include <cstdio>
#include <fstream>

#include "harness/runtime/error.hpp"

namespace distancies::cli {

std::vector<BatchLine> parse_batch(std::istream& in) {
  std::vector<BatchLine> lines;
  std::string s;
  for (int n = 1; std::getline(in, s); ++n) {
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    const std::size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos || s[b] == '#') continue;
    lines.push_back({n, s.substr(b)});
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

bool split_flag(std::string line, std::string& text, bool& cpu) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  std::size_t s = line.find_first_not_of(" \t");
  if (s == std::string::npos) return false;
  line = line.substr(s);
  cpu = false;
  const std::size_t sp = line.find_last_of(" \t");
  if (sp != std::string::npos) {
    const std::string last = line.substr(sp + 1);
    if (last == "0" || last == "1") {
      cpu = last == "1";
      line.erase(sp);
    }
  }
  text = line;
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
        if (cmd.find_first_not_of(" \t") != std::string::npos) block.push_back({n, cmd});
      } else if (cmd.rfind(":batch ", 0) == 0) {
        failed += act.batch_file(cmd.substr(7));
      } else if (split_flag(line, text, cpu)) {
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
