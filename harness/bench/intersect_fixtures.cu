// The posting-list study's fixtures, one per registered variant and data set:
//   intersect/<algorithm>/<grain>/set:<data>[/mem:managed]   a whole query set per iteration
//   intersect/floor/set:<data>                               one read of every touched list
//   intersect_shape/<variant>/ratio:<r> and .../terms:<k>    time vs list-length ratio and
//                                                            query length (the report's plots)
// Sets: small (the study's), gov2 (GOV2-shaped, full scale), and real when
// DISTANCIES_INTERSECT_REAL=PREFIX names PREFIX.bin and PREFIX.queries (scripts/intersect_index.py).
// Counters: queries_per_s, ids_per_ms (ids of the touched lists per ms), gb_per_s (over the
// bytes of the lists each query touches), floor_ratio (time / the set's floor time).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/bench/fixture_util.hpp"
#include "harness/bench/measure.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/runtime/device.hpp"
#include "harness/runtime/error.hpp"
#include "variants/intersect/cpu_intersect.hpp"
#include "harness/intersect/generate.hpp"
#include "harness/intersect/gpu_intersect.hpp"
#include "variants/intersect/intersect_registry.hpp"

namespace distancies::bench {
namespace {

using namespace intersect;

// Seconds of timed work a GPU fixture gathers (Google Benchmark's default is 0.5): the whole
// family stays near two minutes on an H100.
constexpr double kMinSeconds = 0.2;
using Answers = std::vector<std::vector<std::uint32_t>>;

// The serial CPU rows: one untimed run, then the host clock around each iteration.
double time_host(benchmark::State& st, double bytes, const std::function<void()>& work) {
  work();
  Means m;
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    st.SetIterationTime(ms / 1e3);
    m.add("ms", ms);
  }
  m.publish(st);
  const double ms = m.mean("ms");
  if (ms > 0) st.counters["gb_per_s"] = bytes / (ms / 1e3) / 1e9;
  return ms;
}

// A data set with its oracle answers, device copies and floor time, built on first use.
struct SetState {
  DataSet data;
  HashTables hash;
  Answers oracle;
  std::uint64_t bytes = 0;           // every list each query touches, once per query
  std::uint64_t shortest_bytes = 0;  // each query's shortest list: what any algorithm must read
  std::unique_ptr<GpuIndex> index[2];  // explicit, managed
  std::unique_ptr<GpuBatch> batch[2];
  double floor_ms = -1;

  explicit SetState(DataSet d) : data(std::move(d)), hash(build_hash_tables(data.index)) {
    for (const Query& q : data.queries) {
      oracle.push_back(oracle_intersect(lists_of(data.index, q)));
      bytes += touched_bytes(data.index, q);
      const std::vector<std::uint32_t> t = terms_by_length(data.index, q);
      if (!t.empty()) shortest_bytes += 4 * data.index.length(t[0]);
    }
  }
  GpuBatch& gpu(IndexMemory m) {
    const int i = m == IndexMemory::Managed;
    if (!batch[i]) {
      index[i] = std::make_unique<GpuIndex>(data.index, m);
      batch[i] = std::make_unique<GpuBatch>(*index[i], data.queries);
    }
    return *batch[i];
  }
  double floor() {  // median of 21 reads of every touched list
    if (floor_ms < 0) {
      GpuBatch& b = gpu(IndexMemory::Explicit);
      std::vector<float> t;
      for (int i = 0; i < 24; ++i) {
        Event a, e;
        a.record(nullptr);
        b.run_floor(nullptr);
        e.record(nullptr);
        if (i >= 3) t.push_back(elapsed_ms(a, e));
      }
      std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
      floor_ms = t[t.size() / 2];
    }
    return floor_ms;
  }
};

DataSet make_set(const std::string& name) {
  if (name == "small") return small_set();
  if (name == "gov2") return gov2_shaped();
  if (name == "real") {
    const char* p = std::getenv("DISTANCIES_INTERSECT_REAL");
    DataSet d;
    d.index = read_index(std::string(p) + ".bin");
    d.queries = read_queries(std::string(p) + ".queries", d.index.lists());
    return d;
  }
  if (name.rfind("ratio:", 0) == 0) return ratio_set(500, std::stoi(name.substr(6)), 100);
  if (name.rfind("terms:", 0) == 0) return terms_set(std::stoi(name.substr(6)), 20000, 1000);
  throw Error("unknown intersection data set '" + name + "'");
}

SetState& set_state(const std::string& name) {
  static std::map<std::string, std::unique_ptr<SetState>> sets;
  auto& s = sets[name];
  if (!s) s = std::make_unique<SetState>(make_set(name));
  return *s;
}

void publish(benchmark::State& st, SetState& s, double ms, bool floor_ratio) {
  const double n = double(s.data.queries.size());
  st.counters["queries"] = n;
  st.counters["touched_mb"] = s.bytes / 1e6;
  if (ms <= 0) return;
  st.counters["queries_per_s"] = n / (ms / 1e3);
  st.counters["ids_per_ms"] = s.bytes / 4.0 / ms;
  if (floor_ratio && device_status().available) st.counters["floor_ratio"] = ms / s.floor();
}

void intersect_fixture(benchmark::State& st, const IntersectVariant* v, std::string set, IndexMemory mem) {
  SetState& s = set_state(set);
  if (v->serial) {
    Answers got;
    const double ms = time_host(st, double(s.bytes), [&] {
      got.clear();
      for (const Query& q : s.data.queries)
        got.push_back(v->serial(lists_of(s.data.index, q), terms_by_length(s.data.index, q), s.hash));
    });
    if (got != s.oracle) throw Error(std::string(v->name) + " differs from the oracle on set " + set);
    publish(st, s, ms, true);
    return;
  }
  GpuBatch& b = s.gpu(mem);
  b.run(*v, nullptr);
  if (b.answers() != s.oracle) throw Error(std::string(v->name) + " differs from the oracle on set " + set);
  // The engine refuses a time faster than reading each query's shortest list (every algorithm
  // reads each of its ids); the searching rows may skip parts of the other lists, so their
  // GB/s over the touched bytes is an effective rate and their floor ratio may fall below 1.
  const double ms = exec_kernel(st, [&](cudaStream_t stream) { b.run(*v, stream); }, double(s.shortest_bytes));
  if (ms <= 0) return;
  st.counters["gb_per_s"] = double(s.bytes) / (ms * 1e6);
  publish(st, s, ms, true);
}

void floor_fixture(benchmark::State& st, std::string set) {
  SetState& s = set_state(set);
  GpuBatch& b = s.gpu(IndexMemory::Explicit);
  const double ms = exec_kernel(st, [&](cudaStream_t stream) { b.run_floor(stream); }, double(s.bytes));
  if (ms > 0) publish(st, s, ms, false);
}

}  // namespace

void register_intersect_fixtures(bool gpu) {
  std::vector<std::string> sets = {"small", "gov2"};
  if (std::getenv("DISTANCIES_INTERSECT_REAL")) sets.push_back("real");
  for (const std::string& set : sets) {
    if (gpu) min_time(timed(add("intersect/floor/set:" + set, floor_fixture, set)), kMinSeconds);
    for (const IntersectVariant& v : intersect_variants()) {
      if (!v.serial && !gpu) continue;
      const std::string name = std::string("intersect/") + method_name(v.method) + "/" + grain_label(v) + "/set:" + set;
      auto* b = timed(add(name, intersect_fixture, &v, set, IndexMemory::Explicit));
      if (v.serial)
        b->Iterations(set == "small" ? 20 : 2);
      else
        min_time(b, kMinSeconds);
      if (v.mark && !v.batched)  // the study's memory comparison, on its per-query variants
        min_time(timed(add(name + "/mem:managed", intersect_fixture, &v, set, IndexMemory::Managed)), kMinSeconds);
    }
  }
  // Time against list-length ratio and query length: the batched GPU rows and serial SVS.
  for (const IntersectVariant& v : intersect_variants()) {
    if (!(v.batched && gpu) && std::string(v.name) != "svs_serial") continue;
    for (int r : {1, 4, 16, 64, 256}) {
      auto* b = timed(add("intersect_shape/" + std::string(v.name) + "/ratio:" + std::to_string(r), intersect_fixture,
                          &v, "ratio:" + std::to_string(r), IndexMemory::Explicit));
      v.serial ? b->Iterations(3) : min_time(b, kMinSeconds);
    }
    for (int k = 1; k <= 5; ++k) {
      auto* b = timed(add("intersect_shape/" + std::string(v.name) + "/terms:" + std::to_string(k), intersect_fixture,
                          &v, "terms:" + std::to_string(k), IndexMemory::Explicit));
      v.serial ? b->Iterations(3) : min_time(b, kMinSeconds);
    }
  }
}

}  // namespace distancies::bench
