#include "harness/intersect/generate.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "runtime/error.hpp"

namespace distancies::intersect {

std::vector<std::uint32_t> sorted_sample(std::size_t n, std::uint32_t max_id, std::uint64_t seed) {
  const std::uint64_t universe = std::uint64_t(max_id) + 1;
  if (n > universe) throw Error("cannot draw " + std::to_string(n) + " distinct ids from " + std::to_string(universe));
  std::mt19937_64 rng(seed);
  std::vector<std::uint32_t> v;
  if (n * 4 > universe) {  // dense: select each id with the right odds (selection sampling)
    v.reserve(n);
    std::uint64_t need = n;
    for (std::uint64_t id = 0; id < universe && need; ++id)
      if (std::uniform_int_distribution<std::uint64_t>(0, universe - id - 1)(rng) < need) {
        v.push_back(static_cast<std::uint32_t>(id));
        --need;
      }
    return v;
  }
  std::uniform_int_distribution<std::uint32_t> u(0, max_id);
  while (v.size() < n) {  // sparse: draw, sort, drop repeats, top up
    while (v.size() < n) v.push_back(u(rng));
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return v;
}

namespace {

std::vector<std::uint32_t> distinct_terms(std::size_t k, std::size_t lists, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::uint32_t> u(0, static_cast<std::uint32_t>(lists - 1));
  std::vector<std::uint32_t> t;
  while (t.size() < k) {
    const std::uint32_t x = u(rng);
    if (std::find(t.begin(), t.end(), x) == t.end()) t.push_back(x);
  }
  return t;
}

}  // namespace

DataSet small_set(std::uint64_t seed) {
  DataSet d;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> len(50, 100);
  for (int i = 0; i < 1000; ++i) d.index.add(sorted_sample(len(rng), 199, rng()));
  for (int q = 0; q < 300; ++q) d.queries.push_back({distinct_terms(5, 1000, rng), q + 1});
  return d;
}

DataSet gov2_shaped(const Gov2Shape& s, std::uint64_t seed) {
  if (s.lists < 5) throw Error("a GOV2-shaped index needs at least 5 lists");
  std::vector<double> w(s.lists);
  for (std::size_t r = 0; r < s.lists; ++r) w[r] = std::pow(double(r + 1), -s.zipf_exponent);
  const std::uint64_t total = std::llround(s.mean_length * double(s.lists));
  const double c = double(total) / std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<std::uint64_t> len(s.lists);
  std::uint64_t sum = 0;
  for (std::size_t r = 0; r < s.lists; ++r) sum += len[r] = std::max<std::uint64_t>(1, std::uint64_t(c * w[r]));
  // Rounding leftovers go one id each to the longest lists, so the mean is exactly the target.
  for (std::size_t r = 0; sum < total; r = (r + 1) % s.lists, ++sum) ++len[r];
  for (auto& l : len) l = std::min<std::uint64_t>(l, std::uint64_t(s.max_id) + 1);
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> rank(s.lists);  // term t has the rank[t]-th longest list
  std::iota(rank.begin(), rank.end(), 0);
  std::shuffle(rank.begin(), rank.end(), rng);
  DataSet d;
  d.index.ids.reserve(total);
  for (std::size_t t = 0; t < s.lists; ++t) {
    std::vector<std::uint32_t> l = sorted_sample(len[rank[t]], s.max_id, rng());
    if (rank[t] == 0 && l.back() != s.max_id) l.back() = s.max_id;  // the stated maximum is present
    d.index.add(l);
  }
  std::uniform_int_distribution<int> k(2, kMaxTerms);
  for (std::size_t q = 0; q < s.queries; ++q) d.queries.push_back({distinct_terms(k(rng), s.lists, rng), int(q + 1)});
  return d;
}

DataSet ratio_set(std::size_t short_len, int ratio, std::size_t queries, std::uint64_t seed) {
  DataSet d;
  std::mt19937_64 rng(seed);
  const std::uint32_t max_id = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(25205174, std::max<std::uint64_t>(4 * short_len * ratio, 1000)));
  for (std::size_t q = 0; q < queries; ++q) {
    d.index.add(sorted_sample(short_len, max_id, rng()));
    d.index.add(sorted_sample(short_len * ratio, max_id, rng()));
    d.queries.push_back({{std::uint32_t(2 * q), std::uint32_t(2 * q + 1)}, int(q + 1)});
  }
  return d;
}

DataSet terms_set(int terms, std::size_t len, std::size_t queries, std::uint64_t seed) {
  if (terms < 1 || terms > kMaxTerms) throw Error("a query has 1.." + std::to_string(kMaxTerms) + " terms");
  DataSet d;
  std::mt19937_64 rng(seed);
  const std::uint32_t max_id = static_cast<std::uint32_t>(4 * len);  // dense enough to leave answers
  std::uniform_int_distribution<std::size_t> l(len / 2, len * 3 / 2);
  const std::size_t lists = std::max<std::size_t>(64, 2 * terms);
  for (std::size_t i = 0; i < lists; ++i) d.index.add(sorted_sample(l(rng), max_id, rng()));
  for (std::size_t q = 0; q < queries; ++q) d.queries.push_back({distinct_terms(terms, lists, rng), int(q + 1)});
  return d;
}

std::vector<std::pair<const char*, DataSet>> adversarial_sets() {
  std::vector<std::pair<const char*, DataSet>> out;
  auto q = [](std::vector<std::uint32_t> t) { return Query{std::move(t), 0}; };
  {  // disjoint lists: evens vs odds, and ranges that never meet
    DataSet d;
    std::vector<std::uint32_t> even, odd, low, high;
    for (std::uint32_t i = 0; i < 5000; ++i) (i % 2 ? odd : even).push_back(i);
    for (std::uint32_t i = 0; i < 3000; ++i) low.push_back(i), high.push_back(1000000 + i);
    for (auto* l : {&even, &odd, &low, &high}) d.index.add(*l);
    d.queries = {q({0, 1}), q({2, 3}), q({0, 1, 2, 3}), q({3, 2})};
    out.emplace_back("disjoint", std::move(d));
  }
  {  // identical lists: the answer is the whole list
    DataSet d;
    const auto l = sorted_sample(20000, 1 << 24, 7);
    for (int i = 0; i < 5; ++i) d.index.add(l);
    d.queries = {q({0, 1}), q({0, 1, 2, 3, 4}), q({4, 4}), q({2})};
    out.emplace_back("identical", std::move(d));
  }
  {  // one list empty: nothing survives, wherever the empty list is named
    DataSet d;
    d.index.add(sorted_sample(1000, 100000, 1));
    d.index.add({});
    d.index.add(sorted_sample(50000, 100000, 2));
    d.queries = {q({0, 1}), q({1, 0, 2}), q({2, 1}), q({1})};
    out.emplace_back("one_empty", std::move(d));
  }
  {  // one huge list against tiny ones
    DataSet d;
    d.index.add(sorted_sample(2000000, 4000000, 3));
    d.index.add(sorted_sample(3, 4000000, 4));
    d.index.add({0, 1999999, 3999999});
    d.index.add(sorted_sample(40, 4000000, 5));
    d.queries = {q({0, 1}), q({0, 2}), q({2, 0, 3}), q({0, 1, 2, 3})};
    out.emplace_back("huge_vs_tiny", std::move(d));
  }
  {  // every id at the top of the uint32 range, the largest id the format can hold
    DataSet d;
    const std::uint32_t top = 0xFFFFFFFFu;
    d.index.add({top});
    d.index.add({top - 2, top - 1, top});
    d.index.add({0, top});
    d.index.add({top - 1});
    d.queries = {q({0, 1}), q({0, 1, 2}), q({1, 3}), q({0, 3}), q({2, 2})};
    out.emplace_back("max_ids", std::move(d));
  }
  return out;
}

}  // namespace distancies::intersect
