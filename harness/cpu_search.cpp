#include "harness/cpu_search.hpp"

#include <algorithm>
#include <cmath>

namespace distancies {
namespace {

bool excluded(const std::vector<std::int32_t>& ex, std::int32_t r) {
  return std::find(ex.begin(), ex.end(), r) != ex.end();
}

}  // namespace

std::vector<Hit> sequential_search(const Model& m, const float* query, float query_norm, int k,
                                   const std::vector<std::int32_t>& exclude) {
  std::vector<Hit> top;
  if (k <= 0) return top;
  top.reserve(static_cast<std::size_t>(k) + 1);
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const auto row = static_cast<std::int32_t>(r);
    const float* v = m.row(r);
    float dot = 0.0f;
    for (int j = 0; j < m.dim; ++j) dot += query[j] * v[j];
    const float n = m.norms[static_cast<std::size_t>(r)];
    const float sim = n > 0.0f ? dot / (query_norm * n) : 0.0f;
    // Rows arrive in ascending order, so "strictly better than the last" keeps ties stable.
    if (static_cast<int>(top.size()) == k && !(sim > top.back().sim)) continue;
    if (excluded(exclude, row)) continue;
    auto pos = std::upper_bound(top.begin(), top.end(), sim, [](float s, const Hit& h) { return s > h.sim; });
    top.insert(pos, Hit{row, sim});
    if (static_cast<int>(top.size()) > k) top.pop_back();
  }
  return top;
}

std::vector<double> oracle_similarities(const Model& m, const float* query) {
  double qn = 0;
  for (int j = 0; j < m.dim; ++j) qn += double(query[j]) * double(query[j]);
  qn = std::sqrt(qn);
  std::vector<double> sims(static_cast<std::size_t>(m.rows));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const float* v = m.row(r);
    double dot = 0, n = 0;
    for (int j = 0; j < m.dim; ++j) {
      dot += double(query[j]) * double(v[j]);
      n += double(v[j]) * double(v[j]);
    }
    sims[static_cast<std::size_t>(r)] = (n > 0 && qn > 0) ? dot / (qn * std::sqrt(n)) : 0.0;
  }
  return sims;
}

std::vector<OracleHit> oracle_search(const Model& m, const float* query, int k,
                                     const std::vector<std::int32_t>& exclude) {
  const std::vector<double> sims = oracle_similarities(m, query);
  std::vector<OracleHit> all;
  all.reserve(sims.size());
  for (std::size_t r = 0; r < sims.size(); ++r)
    if (!excluded(exclude, static_cast<std::int32_t>(r))) all.push_back({static_cast<std::int32_t>(r), sims[r]});
  const std::size_t kk = std::min<std::size_t>(k > 0 ? static_cast<std::size_t>(k) : 0, all.size());
  auto better = [](const OracleHit& a, const OracleHit& b) {
    return a.sim > b.sim || (a.sim == b.sim && a.row < b.row);
  };
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(kk), all.end(), better);
  all.resize(kk);
  return all;
}

std::vector<Hit> drop_excluded(const std::vector<Hit>& ranked, const std::vector<std::int32_t>& exclude, int k) {
  std::vector<Hit> out;
  for (const Hit& h : ranked) {
    if (static_cast<int>(out.size()) == k) break;
    if (!excluded(exclude, h.row)) out.push_back(h);
  }
  return out;
}

}  // namespace distancies
