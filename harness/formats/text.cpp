// GloVe text ("word v1 ... vD") and the study's text format ("word norm v1 ... vD").
// Blocks of lines are parsed by several threads; rows stay in per-piece buffers until the
// shared sort/gather step copies them into the model.
#include <algorithm>
#include <cmath>
#include <deque>
#include <thread>

#include "harness/formats/internal.hpp"
#include "harness/formats/text_reader.hpp"

namespace distancies::fmt {
namespace {

struct Piece {
  std::vector<std::string> words;
  std::vector<float> values;        // dim per row
  std::vector<std::int64_t> lines;  // line within the piece, 0-based
  std::int64_t line_count = 0;
  std::int64_t error_line = -1;  // 0-based within the piece
  std::string error;
};

struct Grammar {
  int dim = 0;
  bool study = false;  // a stored norm precedes the values
  int numbers() const { return dim + (study ? 1 : 0); }
};

void parse_piece(std::string_view text, const Grammar& g, std::size_t expected_rows, Piece& out) {
  out.values.reserve(expected_rows * static_cast<std::size_t>(g.dim));
  out.words.reserve(expected_rows);
  std::vector<float> tmp(static_cast<std::size_t>(g.numbers()));
  LineCursor cur(text);
  std::string_view line;
  for (std::int64_t ln = 0; cur.next(line); ++ln) {
    out.line_count = ln + 1;
    line = trim_right(line);
    if (line.empty()) continue;  // blank lines (e.g. a trailing one) carry no row
    std::string_view word;
    std::string err = split_row(line, g.numbers(), word, tmp.data());
    const float* v = tmp.data() + (g.study ? 1 : 0);
    if (err.empty() && g.study) {
      float computed = vector_norm(v, g.dim);
      bool finite = std::isfinite(computed) && std::isfinite(tmp[0]);
      if (finite && !norm_matches(tmp[0], computed))
        err = "stored norm " + number(tmp[0]) + " does not match the norm of the values " + number(computed) +
              " (relative tolerance 1e-3)";
    }
    if (!err.empty()) {
      out.error_line = ln;
      out.error = std::move(err);
      return;  // the load stops at this piece; line numbers only matter for the pieces before it
    }
    out.words.emplace_back(word);
    out.values.insert(out.values.end(), v, v + g.dim);
    out.lines.push_back(ln);
  }
  if (out.values.capacity() > out.values.size() + out.values.size() / 4) out.values.shrink_to_fit();
}

// Splits a block at line boundaries into about `parts` pieces.
std::vector<std::string_view> split_block(std::string_view block, unsigned parts) {
  std::vector<std::string_view> out;
  std::size_t target = block.size() / parts + 1;
  while (!block.empty()) {
    std::size_t cut = block.size();
    if (block.size() > target) {
      std::size_t nl = block.find('\n', target);
      if (nl != std::string_view::npos) cut = nl + 1;
    }
    out.push_back(block.substr(0, cut));
    block.remove_prefix(cut);
  }
  return out;
}

// Finds the first non-blank line of the file: its trailing number count fixes the dimension.
bool first_row_numbers(std::string_view block, int& numbers, std::int64_t& line_no, std::string_view& first) {
  LineCursor cur(block);
  std::string_view line;
  for (line_no = 1; cur.next(line); ++line_no) {
    line = trim_right(line);
    if (line.empty()) continue;
    numbers = count_trailing_numbers(line);
    first = line;
    return true;
  }
  return false;
}

}  // namespace

Model load_text(const std::string& path, const TextSpec& spec, const LoadOptions& opt, LoadReport* report) {
  InFile file(path);
  if (file.size() == 0) fail(path, "empty file");
  BlockReader reader(file, opt.progress);
  Grammar g;
  g.study = spec.study;
  g.dim = spec.dim;
  bool skip_header = spec.header;

  RawRows raw;
  std::deque<std::vector<float>> storage;  // rows point into these, so they must not move
  std::int64_t line_base = 0;
  std::size_t row_bytes_estimate = spec.dim > 0 ? static_cast<std::size_t>(spec.dim) * 9 : 0;
  const unsigned workers = worker_count();
  std::string_view block;
  while (reader.next(block)) {
    if (skip_header) {  // word2vec text: "ROWS DIM" was read by the caller
      std::size_t nl = block.find('\n');
      block.remove_prefix(nl == std::string_view::npos ? block.size() : nl + 1);
      line_base = 1;
      skip_header = false;
    }
    if (g.dim == 0) {
      int numbers = 0;
      std::int64_t line_no = 0;
      std::string_view first;
      if (!first_row_numbers(block, numbers, line_no, first)) {
        line_base += static_cast<std::int64_t>(std::count(block.begin(), block.end(), '\n'));
        continue;  // only blank lines so far
      }
      std::uint64_t hr, hd;
      if (!spec.header && parse_word2vec_header(first, hr, hd))
        fail_line(path, line_base + line_no,
                  "this looks like a word2vec header 'ROWS DIM', not a row (use --format word2vec)");
      int need = g.study ? 2 : 1;
      if (numbers < need)
        fail_line(
            path, line_base + line_no,
            g.study ? "expected a word, its norm and at least one number" : "expected a word followed by numbers");
      g.dim = numbers - (g.study ? 1 : 0);
      row_bytes_estimate = first.size() + 1;
    }
    std::vector<std::string_view> parts = split_block(block, block.size() < (1u << 20) ? 1 : workers);
    std::vector<Piece> pieces(parts.size());
    std::vector<std::thread> pool;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      std::size_t expected = parts[p].size() / row_bytes_estimate + 16;
      if (parts.size() == 1) {
        parse_piece(parts[p], g, expected, pieces[p]);
      } else {
        pool.emplace_back([&, p, expected] { parse_piece(parts[p], g, expected, pieces[p]); });
      }
    }
    for (auto& t : pool) t.join();
    for (Piece& pc : pieces) {
      if (pc.error_line >= 0) fail_line(path, line_base + pc.error_line + 1, pc.error);
      check_row_count(path, raw.words.size() + pc.words.size());
      storage.push_back(std::move(pc.values));
      const float* base = storage.back().data();
      for (std::size_t r = 0; r < pc.words.size(); ++r) {
        raw.words.push_back(std::move(pc.words[r]));
        raw.rows.push_back(base + r * static_cast<std::size_t>(g.dim));
        raw.lines.push_back(line_base + pc.lines[r] + 1);
      }
      line_base += pc.line_count;
    }
  }
  if (raw.words.empty()) fail(path, spec.header ? "no rows after the header" : "empty file (no rows)");
  if (spec.header_rows >= 0 && static_cast<std::int64_t>(raw.words.size()) != spec.header_rows)
    fail(path, "the header announces " + std::to_string(spec.header_rows) + " rows, the file has " +
                   std::to_string(raw.words.size()));
  raw.dim = g.dim;
  Model m = assemble_model(raw, path, opt, report);
  m.format = spec.name;
  return m;
}

bool looks_like_study_text(const std::string& path) {
  InFile file(path);
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), 1u << 18)), '\0');
  head.resize(file.read_some(head.data(), head.size()));
  if (head.compare(0, 3, "\xEF\xBB\xBF") == 0) head.erase(0, 3);
  std::size_t last_nl = head.rfind('\n');
  if (last_nl == std::string::npos) return false;  // want complete lines only
  LineCursor cur(std::string_view(head).substr(0, last_nl + 1));
  std::string_view line;
  int numbers = 0, checked = 0;
  std::vector<float> v;
  while (checked < 8 && cur.next(line)) {
    line = trim_right(line);
    if (line.empty()) continue;
    if (numbers == 0) {
      numbers = count_trailing_numbers(line);
      if (numbers < 2) return false;
      v.resize(static_cast<std::size_t>(numbers));
    }
    std::string_view word;
    if (!split_row(line, numbers, word, v.data()).empty()) return false;
    float computed = vector_norm(v.data() + 1, numbers - 1);
    if (!(computed > 0) || !norm_matches(v[0], computed, 1e-4)) return false;
    ++checked;
  }
  return checked > 0;
}

}  // namespace distancies::fmt
