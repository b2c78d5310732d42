// Validation, byte-wise sort and gather shared by every reader.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>
#include <utility>

#include "harness/formats/internal.hpp"
#include "harness/formats/io.hpp"

namespace distancies {
namespace fmt {
namespace {

enum RowKind : unsigned char { kOk, kNonFinite, kZero };

// Sort key: the first 8 bytes big-endian (zero padded) decide most comparisons without
// touching the scattered string bytes; ties fall back to the whole word, then the row index.
struct Key {
  std::uint64_t prefix;
  std::string_view word;
  std::uint32_t index;
  Key(std::string_view w, std::uint32_t i) : prefix(0), word(w), index(i) {
    for (std::size_t k = 0; k < 8; ++k) prefix = prefix << 8 | (k < w.size() ? static_cast<unsigned char>(w[k]) : 0u);
  }
  bool operator<(const Key& o) const {
    if (prefix != o.prefix) return prefix < o.prefix;
    int c = word.compare(o.word);
    return c != 0 ? c < 0 : index < o.index;
  }
};

std::string where(const std::string& path, const std::vector<std::int64_t>& lines, std::size_t i) {
  if (!lines.empty()) return path + ":" + std::to_string(lines[i]) + ": ";
  return path + ": row " + std::to_string(i + 1) + ": ";
}

// The rows' indices in (word, index) order, each word once: equal words stay in file order, so
// skipping keeps the first; a duplicate is an error unless skipping.
std::vector<std::uint32_t> sorted_unique_rows(std::vector<Key> order, const std::vector<std::string>& words,
                                              const std::vector<std::int64_t>& lines, const std::string& path,
                                              const LoadOptions& opt, LoadReport& rep) {
  if (!std::is_sorted(order.begin(), order.end())) std::sort(order.begin(), order.end());  // native input is sorted
  std::vector<std::uint32_t> kept;
  kept.reserve(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && order[k].word == order[k - 1].word) {
      std::uint32_t i = order[k].index;
      if (!opt.skip_bad_rows) {
        std::size_t first = order[k - 1].index;
        std::string at = lines.empty() ? "row " + std::to_string(first + 1) : "line " + std::to_string(lines[first]);
        throw Error(where(path, lines, i) + "duplicated word " + quoted(words[i]) + " (first at " + at +
                    "; use --skip-bad-rows to keep the first)");
      }
      ++rep.skipped_duplicates;
      continue;
    }
    kept.push_back(order[k].index);
  }
  return kept;
}

// Kept row indices in sorted word order; throws on the first bad row unless skipping.
std::vector<std::uint32_t> plan(const std::vector<std::string>& words, const std::vector<const float*>& rows, int dim,
                                const std::vector<std::int64_t>& lines, const std::string& path, const LoadOptions& opt,
                                LoadReport* report, const std::vector<unsigned char>* known = nullptr,
                                bool sorted_unique = false) {
  const std::size_t n = words.size();
  check_row_count(path, n);
  LoadReport local;
  LoadReport& rep = report ? *report : local;

  std::vector<unsigned char> kind;
  if (known && known->size() == n) {
    kind = *known;
  } else {
    kind.assign(n, kOk);
    parallel_for(static_cast<std::int64_t>(n), [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i)
        kind[static_cast<std::size_t>(i)] = row_kind(rows[static_cast<std::size_t>(i)], dim);
    });
  }

  // A reader that has already checked the words sorted and unique (native): when no row is to be
  // refused or skipped, every row is kept in place, without building the sort keys (2.2 M
  // scattered strings: a few hundred ms).
  if (sorted_unique && (n == 0 || !words[0].empty())) {
    std::size_t zeros = 0;
    bool clean = true;
    for (unsigned char k : kind) {
      zeros += k == kZero;
      clean = clean && k != kNonFinite;
    }
    if (clean && (zeros == 0 || opt.allow_zero_vectors)) {
      rep.zero_vectors += static_cast<std::int64_t>(zeros);
      std::vector<std::uint32_t> kept(n);
      for (std::size_t i = 0; i < n; ++i) kept[i] = static_cast<std::uint32_t>(i);
      return kept;
    }
  }
  // Sequential, so the first bad row in file order is the one reported.
  std::vector<Key> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (words[i].empty()) {
      if (!opt.skip_bad_rows) throw Error(where(path, lines, i) + "empty word (use --skip-bad-rows to skip such rows)");
      ++rep.skipped_empty_words;
      continue;
    }
    if (kind[i] == kNonFinite) {
      if (!opt.skip_bad_rows)
        throw Error(where(path, lines, i) + "non-finite value (NaN or Inf) in the vector of " + quoted(words[i]) +
                    " (use --skip-bad-rows to skip such rows)");
      ++rep.skipped_nonfinite;
      continue;
    }
    if (kind[i] == kZero) {
      ++rep.zero_vectors;
      if (!opt.allow_zero_vectors) {
        if (!opt.skip_bad_rows)
          throw Error(where(path, lines, i) + "zero vector for " + quoted(words[i]) +
                      " (zero vectors are not allowed)");
        continue;
      }
    }
    order.emplace_back(words[i], static_cast<std::uint32_t>(i));
  }

  return sorted_unique_rows(std::move(order), words, lines, path, opt, rep);
}

void gather(Model& out, const std::vector<std::uint32_t>& kept, const std::vector<const float*>& rows,
            const std::vector<float>* norms) {
  parallel_for(out.rows, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) {
      std::uint32_t src = kept[static_cast<std::size_t>(r)];
      std::memcpy(out.row(r), rows[src], sizeof(float) * static_cast<std::size_t>(out.dim));
      out.norms[static_cast<std::size_t>(r)] = norms ? (*norms)[src] : vector_norm(out.row(r), out.dim);
    }
  });
}

}  // namespace

Model assemble_model(RawRows& raw, const std::string& path, const LoadOptions& opt, LoadReport* report) {
  std::vector<std::uint32_t> kept = plan(raw.words, raw.rows, raw.dim, raw.lines, path, opt, report);
  if (kept.empty()) fail(path, "no rows left to load");
  Model m;
  m.allocate(static_cast<std::int64_t>(kept.size()), raw.dim);  // zeroed, so ld padding is zero
  for (std::size_t r = 0; r < kept.size(); ++r) m.words[r] = std::move(raw.words[kept[r]]);
  gather(m, kept, raw.rows, nullptr);
  return m;
}

unsigned char row_kind(const float* v, int dim) {
  // On the bits, so the loop vectorises: exponent all ones is NaN/Inf; +-0 has no bits but the sign.
  std::uint32_t nonfinite = 0, nonzero = 0;
  for (int j = 0; j < dim; ++j) {
    std::uint32_t u;
    std::memcpy(&u, v + j, 4);
    nonfinite |= static_cast<std::uint32_t>((u & 0x7F800000u) == 0x7F800000u);
    nonzero |= u & 0x7FFFFFFFu;
  }
  return nonfinite ? kNonFinite : nonzero ? kOk : kZero;
}

void finalize_in_place(Model& m, const std::string& path, bool compute_norms, const LoadOptions& opt,
                       LoadReport* report, const std::vector<unsigned char>* kinds, bool sorted_unique) {
  if (m.dim <= 0 || m.ld != leading_dim(m.dim))
    fail(path, "model has dim " + std::to_string(m.dim) + " and ld " + std::to_string(m.ld));
  if (m.rows < 0 || m.words.size() != static_cast<std::size_t>(m.rows) ||
      (!compute_norms && m.norms.size() != m.words.size()) ||
      m.vectors.size() < static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(m.ld))
    fail(path, "model words/norms/vectors do not match its row count");
  std::vector<const float*> rows(m.words.size());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = m.row(static_cast<std::int64_t>(i));
  std::vector<std::uint32_t> kept = plan(m.words, rows, m.dim, {}, path, opt, report, kinds, sorted_unique);
  if (kept.empty()) fail(path, "no rows left to load");

  bool identity = kept.size() == m.words.size();
  for (std::size_t i = 0; identity && i < kept.size(); ++i) identity = kept[i] == i;
  if (m.normalized && m.original_norms.size() != m.words.size())
    fail(path, "a model flagged normalized needs one original norm per row");
  if (identity) {  // already sorted and valid (the common case for native and sorted inputs): no copy
    if (compute_norms) m.norms.resize(m.words.size());
    parallel_for(m.rows, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t r = b; r < e; ++r) {
        float* v = m.row(r);
        std::fill(v + m.dim, v + m.ld, 0.0f);
        if (compute_norms) m.norms[static_cast<std::size_t>(r)] = vector_norm(v, m.dim);
      }
    });
  } else {
    Model out;
    out.allocate(static_cast<std::int64_t>(kept.size()), m.dim);
    for (std::size_t r = 0; r < kept.size(); ++r) out.words[r] = std::move(m.words[kept[r]]);
    gather(out, kept, rows, compute_norms ? nullptr : &m.norms);
    out.normalized = m.normalized;
    if (m.normalized) {
      out.original_norms.resize(kept.size());
      for (std::size_t r = 0; r < kept.size(); ++r) out.original_norms[r] = m.original_norms[kept[r]];
    }
    out.format = std::move(m.format);
    m = std::move(out);
  }
  if (m.normalized) check_unit_rows(m, path);
}

void check_unit_rows(const Model& m, const std::string& path) {
  // The flag promises unit rows; a row far from norm 1 means the flag (or the file) is wrong.
  for (std::size_t r = 0; r < m.norms.size(); ++r) {
    const double n = m.norms[r];
    if (n != 0 && std::fabs(n - 1) > 1e-3)
      fail(path, "flagged normalized, but row " + std::to_string(r + 1) + " (" + quoted(m.words[r]) + ") has norm " +
                     std::to_string(n));
  }
}

bool norm_matches(float stored, float computed, double tolerance) {
  double diff = std::fabs(double(stored) - double(computed));
  return diff <= tolerance * std::fabs(double(computed)) + 1e-6;
}

}  // namespace fmt

void finalize_model(Model& m, const LoadOptions& opt, LoadReport* report) {
  // A normalised model's rows have norm 1: norms are recomputed from them, and the norms it
  // carried (when it has no original_norms yet) are its originals, kept as data.
  if (m.norms.size() != m.words.size()) m.norms.assign(m.words.size(), 0.0f);
  if (m.normalized && m.original_norms.empty()) m.original_norms = m.norms;
  if (!m.normalized) m.original_norms.clear();
  fmt::finalize_in_place(m, m.format.empty() ? std::string("model") : m.format, true, opt, report);
}

}  // namespace distancies
