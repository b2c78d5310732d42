// The posting-list study's fixtures, one per registered variant and data set:
//   intersect/<algorithm>/<grain>/set:<data>[/mem:managed]   a whole query set per iteration
//   intersect/floor/set:<data>                               one read of every distinct list
//   intersect_latency/<algorithm>/<grain>/set:<data>         each query alone, p50 / p99 (below)
//   intersect_shape/<variant>/ratio:<r> and .../terms:<k>    time vs list-length ratio and
//                                                            query length (the report's plots)
// Sets: small (the study's), gov2 (GOV2-shaped, full scale), and real when
// DISTANCIES_INTERSECT_REAL=PREFIX names PREFIX.bin and PREFIX.queries (scripts/data/intersect_index.py).
// The CPU peers (the *_allcores rows) are timed with the host clock over every core.
// Counters: queries_per_s, ids_per_ms and gb_per_s (over the lists each query touches, once per
// query: effective rates), distinct_mb (the floor's bytes), min_read_mb (the bytes every
// algorithm reads: the refusal's), floor_ratio (time / least_read_ms(min_read_mb): a true
// floor, fixture_util.hpp), distinct_read_ratio (time / reading every distinct list once with the
// best read kernel: a comparison; docs/intersection.md), lists_mb and index_mb (GPU rows: the
// device bytes of the lists they read, ids or packed, and of everything they search with).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "harness/intersect/floor_bytes.hpp"
#include "harness/intersect/generate.hpp"
#include "harness/intersect/gpu_intersect.hpp"
#include "runtime/device.hpp"
#include "runtime/error.hpp"
#include "variants/embeddings/registry.hpp"
#include "variants/intersect/cpu_intersect.hpp"
#include "variants/intersect/intersect_registry.hpp"

namespace distancies::bench {
namespace {

using namespace intersect;

// Seconds of timed work a GPU fixture gathers (Google Benchmark's default is 0.5): the whole
// family stays near two minutes on an H100.
constexpr double kMinSeconds = 0.2;
using Answers = std::vector<std::vector<std::uint32_t>>;

// The serial CPU rows: one untimed run, then the engine's host clock around each sample.
double time_host(benchmark::State& st, double bytes, const std::function<void()>& work) {
  Means m;
  ExecOptions o;
  o.warmups = 1;
  o.on_sample = [&](double ms) { m.add("ms", ms); };
  if (!exec_host(st, work, o)) return 0;
  m.publish(st);
  const double ms = m.mean("ms");
  if (ms > 0) st.counters["gb_per_s"] = bytes / (ms / 1e3) / 1e9;
  return ms;
}

// A data set with its oracle answers, device copies and floor, built on first use.
struct SetState {
  DataSet data;
  HashTables hash;
  Answers oracle;
  BatchBytes bytes;
  std::unique_ptr<GpuIndex> index[2];  // explicit, managed
  std::unique_ptr<GpuBatch> batch[2];
  DeviceBuffer distinct_lists;  // every distinct list the queries name, once, end to end
  double floor_ms = -1;

  explicit SetState(DataSet d)
      : data(std::move(d)), hash(build_hash_tables(data.index)), bytes(batch_bytes(data.index, data.queries)) {
    for (const Query& q : data.queries) oracle.push_back(oracle_intersect(lists_of(data.index, q)));
  }
  GpuBatch& gpu(IndexMemory m) {
    const int i = m == IndexMemory::Managed;
    if (!batch[i]) {
      index[i] = std::make_unique<GpuIndex>(data.index, m);
      batch[i] = std::make_unique<GpuBatch>(*index[i], data.queries);
    }
    return *batch[i];
  }
  // The floor reads a copy of the distinct lists, contiguous and aligned: the best read of those
  // bytes, which no algorithm reading them where they lie in the index can beat.
  const DeviceBuffer& distinct() {
    if (!distinct_lists.get()) {
      std::set<std::uint32_t> terms;
      for (const Query& q : data.queries) terms.insert(q.terms.begin(), q.terms.end());
      std::vector<std::uint32_t> host;
      host.reserve(bytes.distinct / 4);
      for (std::uint32_t t : terms) {
        const ListView l = data.index.list(t);
        host.insert(host.end(), l.begin(), l.end());
      }
      distinct_lists = DeviceBuffer(std::max<std::size_t>(host.size() * 4, 16), "the distinct lists");
      if (!host.empty())
        CUDA_CHECK(cudaMemcpy(distinct_lists.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice));
    }
    return distinct_lists;
  }
  double floor() {  // the fastest of 21 best reads of the distinct lists
    if (floor_ms < 0) floor_ms = bytes.distinct ? best_read_ms(distinct().get(), bytes.distinct, 21) : 0;
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

// min_read: the bytes the row must read (0: the shortest lists' ids, distinct_shortest).
void publish(benchmark::State& st, SetState& s, double ms, bool floor_ratio, double min_read = 0) {
  if (min_read <= 0) min_read = double(s.bytes.distinct_shortest);
  const double n = double(s.data.queries.size());
  st.counters["queries"] = n;
  st.counters["touched_bytes_per_query_sum_mb"] = s.bytes.per_query_sum / 1e6;
  st.counters["distinct_mb"] = s.bytes.distinct / 1e6;
  st.counters["min_read_mb"] = min_read / 1e6;
  if (ms <= 0) return;
  st.counters["queries_per_s"] = n / (ms / 1e3);
  st.counters["ids_per_ms"] = s.bytes.per_query_sum / 4.0 / ms;
  if (!floor_ratio || !device_status().available || s.floor() <= 0) return;
  // The floor every algorithm has: the least time of reading its minimal bytes (min_read_mb).
  // Reading every distinct list once is a comparison, not a floor: the searching rows skip parts
  // of the longer lists and may beat it.
  st.counters["floor_ratio"] = ms / least_read_ms(min_read);
  st.counters["distinct_read_ratio"] = ms / s.floor();
}

// Seconds of batches a CPU peer gathers per repetition: a batch takes milliseconds, so this is
// hundreds of samples, enough for a steady median.
constexpr double kPeerMinSeconds = 1.0;

// The CPU peers on every core: prepared once (untimed, as the GPU rows' index upload), checked
// against the oracle, then the host clock around each batch. ms_median, ms_min and ms_max give
// the samples' centre and spread; threads, how many ran.
// A peer is kept per row and set: its repetitions do not build its bitmaps again.
void peer_fixture(benchmark::State& st, const IntersectVariant& v, SetState& s, const std::string& set) {
  static std::map<std::string, std::unique_ptr<CpuPeer>> peers;
  std::unique_ptr<CpuPeer>& kept = peers[std::string(v.name) + "/" + set];
  if (!kept) kept = v.peer(s.data.index, 0);  // PeerNotBuilt: the fixture is skipped, with why
  CpuPeer* peer = kept.get();
  Answers got = peer->run(s.data.queries);
  if (got != s.oracle) throw Error(std::string(v.name) + " differs from the oracle on set " + set);
  std::vector<double> ms;
  ExecOptions o;
  o.warmups = 0;  // the oracle's check above was the warm-up
  o.on_sample = [&](double t) { ms.push_back(t); };
  if (!exec_host(
          st, [&] { got = peer->run(s.data.queries); }, o))
    return;
  std::sort(ms.begin(), ms.end());
  const double median = ms.empty() ? 0 : ms[ms.size() / 2];
  st.counters["ms_median"] = median;
  st.counters["ms_min"] = ms.empty() ? 0 : ms.front();
  st.counters["ms_max"] = ms.empty() ? 0 : ms.back();
  st.counters["threads"] = peer->threads();
  if (median > 0) st.counters["gb_per_s"] = double(s.bytes.per_query_sum) / (median * 1e6);
  publish(st, s, median, true);
}

// What a caller with host queries waits for, by the host clock as the CPU peers are timed (the
// fixture's own time is the GPU events of the kernels alone): host_answers_ms, the batch run and
// its answers copied back and assembled per query (GpuBatch::answers), a median of 15; and
// host_batch_ms, building the batch on the device from the host queries in the buffers it keeps
// from the batch before (GpuBatch::assign: each query's tiles cut on the host and uploaded), a
// median of 3; host_total_ms, both: what a peer's time is compared with (docs/intersection.md).
void publish_host_clock(benchmark::State& st, SetState& s, IndexMemory mem, const IntersectVariant& v) {
  using clock = std::chrono::steady_clock;
  GpuBatch& b = s.gpu(mem);
  std::vector<double> answers, build;
  for (int i = 0; i < 15; ++i) {
    const auto t0 = clock::now();
    b.run(v, nullptr);
    benchmark::DoNotOptimize(b.answers());
    answers.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  }
  for (int i = 0; i < 3; ++i) {
    const auto t0 = clock::now();
    b.assign(s.data.queries);  // the same queries again, in the buffers the batch keeps
    CUDA_CHECK(cudaDeviceSynchronize());
    build.push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
  }
  const double answers_ms = median_of(answers), batch_ms = median_of(build);
  st.counters["host_answers_ms"] = answers_ms;
  st.counters["host_batch_ms"] = batch_ms;
  st.counters["host_total_ms"] = answers_ms + batch_ms;  // host queries to host answers
}

void intersect_fixture(benchmark::State& st, const IntersectVariant* v, std::string set, IndexMemory mem) {
  SetState& s = set_state(set);
  if (v->peer) return peer_fixture(st, *v, s, set);
  if (v->serial) {
    Answers got;
    const double ms = time_host(st, double(s.bytes.per_query_sum), [&] {
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
  // Every algorithm reads each id of each query's shortest list (its candidates), a list named
  // twice at least once: the refusal's bytes (min_read_mb) and the floor's; a row reading packed
  // lists, their packed bytes. The searching rows skip parts of the longer lists, so their
  // distinct_read_ratio may fall below 1.
  const bool packed = v->method == IntersectMethod::Packed;
  const GpuIndex& ix = *s.index[mem == IndexMemory::Managed];
  const double min_read = packed ? double(packed_shortest_bytes(ix.packed_host(), s.data.index, s.data.queries))
                                 : double(s.bytes.distinct_shortest);
  const double ms = exec_kernel(
      st, [&](cudaStream_t stream) { b.run(*v, stream); }, min_read);
  if (ms <= 0) return;
  publish_host_clock(st, s, mem, *v);
  st.counters["gb_per_s"] = double(s.bytes.per_query_sum) / (ms * 1e6);
  st.counters["lists_mb"] = double(ix.list_bytes(packed)) / 1e6;
  st.counters["index_mb"] = double(ix.list_bytes(packed) + ix.aux_bytes(packed)) / 1e6;
  publish(st, s, ms, true, min_read);
}

// One query at a time, as a caller waiting for each answer sees it, timed by the host clock per
// query: a GPU row through GpuBatch::run_one (its launch, one copy back, the answer assembled on
// the host), a CPU peer on one core. A pass asks every query of the set once (checked against the
// oracle first); p50_us, p90_us, p99_us and max_us are over every query of every pass, and the
// fixture's time is a pass's.
void latency_fixture(benchmark::State& st, const IntersectVariant* v, std::string set) {
  SetState& s = set_state(set);
  std::function<std::vector<std::uint32_t>(std::size_t)> one;
  std::unique_ptr<CpuPeer> peer;
  Stream stream;
  if (v->peer) {
    peer = v->peer(s.data.index, 1);  // PeerNotBuilt: skipped, with why
    one = [&](std::size_t q) { return peer->answer(s.data.queries[q]); };
  } else {
    GpuBatch& b = s.gpu(IndexMemory::Explicit);
    stream = Stream(cudaStreamNonBlocking);
    one = [&b, v, &stream](std::size_t q) { return b.run_one(*v, q, stream); };
  }
  for (std::size_t q = 0; q < s.oracle.size(); ++q)
    if (one(q) != s.oracle[q])
      throw Error(std::string(v->name) + " alone differs from the oracle on query " + std::to_string(q + 1));
  std::vector<double> us;
  ExecOptions o;
  o.warmups = 0;  // the check above was the warm-up
  const bool ran = exec_host(
      st,
      [&] {
        for (std::size_t q = 0; q < s.oracle.size(); ++q) {
          const auto t0 = std::chrono::steady_clock::now();
          benchmark::DoNotOptimize(one(q));
          us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
      },
      o);
  if (!ran || us.empty()) return;
  std::sort(us.begin(), us.end());
  const auto at = [&](double f) {
    return us[std::min(us.size() - 1, static_cast<std::size_t>(f * double(us.size())))];
  };
  st.counters["p50_us"] = at(0.5);
  st.counters["p90_us"] = at(0.9);
  st.counters["p99_us"] = at(0.99);
  st.counters["max_us"] = us.back();
  st.counters["samples"] = double(us.size());
  st.counters["queries"] = double(s.oracle.size());
}

void floor_fixture(benchmark::State& st, std::string set) {
  SetState& s = set_state(set);
  const DeviceBuffer& d = s.distinct();
  DeviceBuffer sink(static_cast<std::size_t>(floor_sink_len()) * sizeof(float), "floor sink");
  const double ms = exec_kernel(
      st, [&](cudaStream_t stream) { launch_best_read(d.get(), s.bytes.distinct, sink.as<float>(), stream); },
      double(s.bytes.distinct));
  if (ms > 0) publish(st, s, ms, false);
}
}  // namespace

// The study's registrar (cmake/studies.cmake); gpu: also its GPU rows.
void register_intersect_fixtures(bool gpu) {
  std::vector<std::string> sets = {"small", "gov2"};
  if (std::getenv("DISTANCIES_INTERSECT_REAL")) sets.push_back("real");
  for (const std::string& set : sets) {
    if (gpu) min_time(timed(add(FixtureName("intersect", "floor").axis("set", set), floor_fixture, set)), kMinSeconds);
    for (const IntersectVariant& v : intersect_variants()) {
      if (!v.serial && !v.peer && !gpu) continue;
      const FixtureName name = FixtureName("intersect", method_name(v.method)).row(grain_label(v)).axis("set", set);
      auto* b = timed(add(name, intersect_fixture, &v, set, IndexMemory::Explicit));
      if (v.serial)
        b->Iterations(set == "small" ? 20 : 2);
      else
        min_time(b, v.peer ? kPeerMinSeconds : kMinSeconds);
      if (v.mark && !v.batched)  // the study's memory comparison, on its per-query variants
        min_time(timed(add(FixtureName(name).axis("mem", "managed"), intersect_fixture, &v, set, IndexMemory::Managed)),
                 kMinSeconds);
    }
  }
  // One query at a time: the rows that answer one query alone, and the CPU peers on one core.
  for (const std::string& set : sets)
    for (const IntersectVariant& v : intersect_variants()) {
      if (!(v.compacts && gpu) && !v.peer) continue;
      const FixtureName name = FixtureName("intersect_latency", method_name(v.method))
                                   .row(v.peer ? std::string("one_core") : grain_label(v))
                                   .axis("set", set);
      min_time(timed(add(name, latency_fixture, &v, set)), kMinSeconds);
    }
  // Time against list-length ratio and query length: the batched GPU rows and serial SVS.
  for (const IntersectVariant& v : intersect_variants()) {
    if (!(v.batched && gpu) && std::string(v.name) != "svs_serial") continue;
    for (int r : {1, 4, 16, 64, 256}) {
      auto* b = timed(add(FixtureName("intersect_shape", v.name).axis("ratio", r), intersect_fixture, &v,
                          "ratio:" + std::to_string(r), IndexMemory::Explicit));
      v.serial ? b->Iterations(3) : min_time(b, kMinSeconds);
    }
    for (int k = 1; k <= 5; ++k) {
      auto* b = timed(add(FixtureName("intersect_shape", v.name).axis("terms", k), intersect_fixture, &v,
                          "terms:" + std::to_string(k), IndexMemory::Explicit));
      v.serial ? b->Iterations(3) : min_time(b, kMinSeconds);
    }
  }
}

}  // namespace distancies::bench
