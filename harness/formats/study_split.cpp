// The study's split format: X.keys (one word per line) and X.values (per row: float32 norm,
// then D float32 values, little-endian), rows in the same order.
#include <algorithm>
#include <cmath>

#include "harness/formats/internal.hpp"
#include "harness/formats/text_reader.hpp"

namespace distancies::fmt {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> read_keys(const std::string& path) {
  InFile file(path);
  if (file.size() == 0) fail(path, "empty file (no keys)");
  Progress none;
  BlockReader reader(file, none);
  std::vector<std::string> words;
  std::string_view block, line;
  while (reader.next(block)) {
    LineCursor cur(block);
    while (cur.next(line)) {
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CRLF; spaces belong to the word
      words.emplace_back(line);
      check_row_count(path, words.size());
    }
  }
  return words;
}

}  // namespace

SplitPaths split_paths(const std::string& path) {
  if (ends_with(path, ".keys")) {
    std::string values = path.substr(0, path.size() - 5) + ".values";
    if (file_exists(values)) return {path, values};
  } else if (ends_with(path, ".values")) {
    std::string keys = path.substr(0, path.size() - 7) + ".keys";
    if (file_exists(keys)) return {keys, path};
  } else if (file_exists(path + ".values")) {
    return {path, path + ".values"};
  }
  return {};
}

Model load_study_split(const std::string& path, const LoadOptions& opt, LoadReport* report) {
  SplitPaths sp = split_paths(path);
  if (sp.keys.empty()) {
    InFile probe(path);  // a missing file says so first
    std::string expected = ends_with(path, ".keys")     ? path.substr(0, path.size() - 5) + ".values"
                           : ends_with(path, ".values") ? path.substr(0, path.size() - 7) + ".keys"
                                                        : path + ".values";
    fail(path, "study-split model needs its other half " + expected + ", which does not exist");
  }
  std::vector<std::string> words = read_keys(sp.keys);
  const std::uint64_t rows = words.size();
  if (rows == 0) fail(sp.keys, "no keys (the file holds no line)");

  InFile values(sp.values);
  if (values.size() == 0) fail(sp.values, "empty file (no values)");
  if (values.size() % 4 != 0)
    fail(sp.values, "size " + std::to_string(values.size()) + " is not a whole number of float32 values");
  const std::uint64_t floats = values.size() / 4;
  if (floats % rows != 0)
    fail(sp.values, std::to_string(floats) + " float32 values do not split into the " + std::to_string(rows) +
                        " rows of " + sp.keys + " (each row is a norm and D values)");
  const std::uint64_t per_row = floats / rows;
  if (per_row < 2 || per_row - 1 > (1u << 24))
    fail(sp.values, std::to_string(per_row) + " floats per row for the " + std::to_string(rows) + " rows of " +
                        sp.keys + " is not a norm followed by a vector");
  const int dim = static_cast<int>(per_row - 1);

  Model m;
  m.allocate(static_cast<std::int64_t>(rows), dim);
  m.words = std::move(words);
  // Read whole rows in chunks and scatter them to ld-strided rows, checking each stored norm.
  const std::size_t chunk_rows =
      static_cast<std::size_t>(std::min<std::uint64_t>(rows, std::max<std::size_t>(1, kChunkBytes / (per_row * 4))));
  std::vector<float> buf(chunk_rows * per_row);
  for (std::uint64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_rows, rows - r0));
    values.read_exact(buf.data(), n * per_row * 4, "row values");
    for (std::size_t k = 0; k < n; ++k) {
      const float* src = buf.data() + k * per_row;
      std::int64_t r = static_cast<std::int64_t>(r0 + k);
      std::copy(src + 1, src + per_row, m.row(r));
      float computed = vector_norm(m.row(r), dim);
      if (std::isfinite(src[0]) && std::isfinite(computed) && !norm_matches(src[0], computed))
        fail(sp.values, "row " + std::to_string(r + 1) + " (" + quoted(m.words[static_cast<std::size_t>(r)]) +
                            "): stored norm " + number(src[0]) + " does not match the norm of the values " +
                            number(computed) + " (relative tolerance 1e-3)");
    }
    if (opt.progress) opt.progress(values.pos(), values.size());
  }
  m.format = "study-split";
  finalize_in_place(m, sp.keys, true, opt, report);
  return m;
}

}  // namespace distancies::fmt
