// Fixture families registered in loops over the registry. Device work is timed by the
// measurement engine (measure.hpp) and reported through UseManualTime; derived rates and the
// fixture's parameters are counters.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "harness/cpu_search.hpp"
#include "harness/embeddings/gpu_search.hpp"
#include "kernels/common/read_floor.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/policy.hpp"
#include "variants/embeddings/precision.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies::bench {
namespace {

const int kTopkKs[] = {1, 10, 100, 1024};
const int kPipelineKs[] = {1, 100, 1024, 4096};
const int kTopkRowCounts[] = {65536, 1048576};  // beside the full model, for k = 10 and 100

// floor: the read-once time of the copy the work reads (fp32 model by default).
void add_rates(Means& m, double ms, double bytes, double floor = 0) {
  const BenchState& s = bench_state();
  if (floor == 0) floor = s.floor_ms;
  m.add("distances_per_ms", double(s.host.rows) / ms);
  if (bytes > 0) m.add("gb_per_s", bytes / (ms * 1e6));
  if (floor > 0) m.add("floor_ratio", ms / floor);
}

// Bytes a dot kernel must move: the model once, the norms, and (sim, index) per row out.
double dot_bytes(const BenchState& s) { return s.model_bytes() + double(s.host.rows) * 12; }

void upload_query(const Workspace& ws, const Query& q) {
  CUDA_CHECK(cudaMemcpy(ws.query.get(), q.vector.data(), q.vector.size() * sizeof(float), cudaMemcpyHostToDevice));
}

DotArgs dot_args(const BenchState& s, const Workspace& ws) {
  const DeviceModel& dm = *s.device;
  return {dm.d_vectors(),       dm.d_norms(), static_cast<int>(dm.rows), dm.dim,          dm.ld,
          ws.query.as<float>(), s.query.norm, ws.sims.as<float>(),       ws.idx.as<int>()};
}

// Bytes of the vectors themselves (no row padding): what any scan must read at least.
double vector_bytes(const BenchState& s, long long rows, Storage storage) {
  return double(rows) * s.host.dim * storage_bytes(storage);
}

// storage: which copy is read (F32: the model; F16: its 16-bit copy, half the bytes; I8: its
// int8 copy, a quarter, without the row scales: the floor of the bytes that dominate).
void floor_fixture(benchmark::State& st, Storage storage) {
  const BenchState& s = bench_state();
  const void* data = s.device->d_vectors();
  std::size_t bytes = s.device->vector_bytes();
  if (storage != Storage::F32) {
    const ReducedCopy& copy = prepared_reduced(*s.device, storage);
    data = copy.data.get();
    bytes = copy.data.bytes();
  }
  const double floor = s.floor_for(storage);
  DeviceBuffer sink(static_cast<std::size_t>(floor_sink_len()) * sizeof(float), "floor sink");
  Means m;
  ExecOptions o;
  o.min_bytes = double(bytes);
  o.on_sample = [&](double ms) {
    m.add("kernel_ms", ms);
    add_rates(m, ms, double(bytes), floor);
  };
  if (!exec(
          st, [&](cudaStream_t str) { launch_read_floor(data, bytes, sink.as<float>(), str); }, o))
    return;
  m.publish(st);
  parameters(st, {{"rows", double(s.host.rows)}, {"dim", double(s.host.dim)}, {"bytes", double(bytes)}});
}

void dot_fixture(benchmark::State& st, const DotVariant* v) {
  const BenchState& s = bench_state();
  Workspace ws;
  ws.allocate(static_cast<int>(s.host.rows), 1, s.host.dim, 0);
  upload_query(ws, s.query);
  const DotArgs args = dot_args(s, ws);
  Means m;
  ExecOptions o;
  o.min_bytes = vector_bytes(s, s.host.rows, Storage::F32) + double(s.host.rows) * 4;  // reads: vectors, norms
  o.on_sample = [&](double ms) {
    m.add("kernel_ms", ms);
    add_rates(m, ms, dot_bytes(s));
  };
  if (!exec(
          st, [&](cudaStream_t str) { v->launch(args, str); }, o))
    return;
  m.publish(st);
  parameters(st, {{"rows", double(s.host.rows)}, {"dim", double(s.host.dim)}});
}

// Each sample restores the stage's input (untimed): the study's stages work in place.
// rows: the first `rows` rows of the model (0: all). A stage that raises its fallback flag on
// this case (it cannot certify it alone, e.g. the 16-bit scan beyond its largest k) is skipped.
// `before`: the stage that makes `stage`'s input (its `after`), and `input_dot` the similarities'
// dot, both resolved at registration.
struct TopkCase {
  const TopkStage* stage;
  const TopkStage* before;
  const DotVariant* input_dot;
  int k, rows;
};

void topk_fixture(benchmark::State& st, TopkCase c) {
  const TopkStage* stage = c.stage;
  const int k = c.k, rows = c.rows;
  const BenchState& s = bench_state();
  const int n = rows > 0 ? std::min(rows, static_cast<int>(s.host.rows)) : static_cast<int>(s.host.rows);
  Workspace ws;
  ws.allocate(n, k, s.host.dim, stage->temp_bytes(n, k));
  CUDA_CHECK(cudaMemset(ws.status.get(), 0, sizeof(int)));
  upload_query(ws, s.query);
  DotArgs args = dot_args(s, ws);
  args.rows = n;
  c.input_dot->launch(args, nullptr);
  TopkState input = ws.topk_state();
  // Stages that scan the model themselves time the whole pass; 16-bit ones read the fp16 copy.
  const bool model_read = stage->reads_model || (c.before && c.before->reads_model);
  auto attach_model = [&](TopkState& t) {
    if (model_read) {
      const ReducedCopy& half = prepared_reduced(*s.device, Storage::F16);
      t.model.dot = &args;
      t.model.reduced = half.data.get();
      t.model.storage = Storage::F16;
      t.model.reduced_ld = reduced_leading_dim(s.host.dim);
      t.model.error_bound =
          reduced_error_bound(Storage::F16, s.host.dim, s.query.vector.data(), s.query.norm, half.min_norm);
    }
  };
  attach_model(input);
  if (c.before) c.before->run(input, nullptr);
  const std::size_t bytes = ws.capacity * sizeof(float);
  DeviceBuffer keep_s(bytes, "pristine sims"), keep_i(bytes, "pristine indices");
  CUDA_CHECK(cudaMemcpy(keep_s.get(), input.sims, bytes, cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpy(keep_i.get(), input.idx, bytes, cudaMemcpyDeviceToDevice));
  TopkState t;
  auto restore = [&](cudaStream_t str) {
    t = ws.topk_state();
    t.chunks = input.chunks;
    attach_model(t);
    CUDA_CHECK(cudaMemcpyAsync(t.sims, keep_s.get(), bytes, cudaMemcpyDeviceToDevice, str));
    CUDA_CHECK(cudaMemcpyAsync(t.idx, keep_i.get(), bytes, cudaMemcpyDeviceToDevice, str));
  };
  auto work = [&](cudaStream_t str) { stage->run(t, str); };
  restore(nullptr);
  work(nullptr);
  int fallback = 0;
  CUDA_CHECK(cudaMemcpy(&fallback, ws.status.get(), sizeof(int), cudaMemcpyDeviceToHost));
  if (fallback != 0) {
    skip(st, "the fallback flag is up after " + (stage->after ? std::string(stage->after) + " and " : std::string()) +
                 stage->name + " at k = " + std::to_string(k) + " over " + std::to_string(n) +
                 " rows: the stage cannot certify this case (a pipeline reruns such a query on its fallback), "
                 "so there is no time of its own to report");
    return;
  }
  Means m;
  ExecOptions o;
  o.prepare = restore;
  // At least: the 16-bit copy for a scan of the model, every similarity for a selection; a
  // stage that works on another's lists has no bound here.
  o.min_bytes = stage->after ? 0.0 : stage->reads_model ? vector_bytes(s, n, Storage::F16) : double(n) * sizeof(float);
  o.on_sample = [&](double ms) {
    m.add("kernel_ms", ms);
    m.add("distances_per_ms", double(n) / ms);
  };
  if (!exec(st, work, o)) return;
  m.publish(st);
  parameters(st, {{"k", double(k)}, {"rows", double(n)}, {"dim", double(s.host.dim)}});
}

// k_arg 0: the run's k (--k, default 10), the name without a k: suffix.
void pipeline_fixture(benchmark::State& st, const Pipeline* p, int k_arg) {
  const BenchState& s = bench_state();
  if (p->habits.copy_model_every_query && !s.host_vectors) {
    skip(st, "needs the host copy of the model (run without --no-host-copy)");
    return;
  }
  GpuSearcher searcher(*s.device, s.host_vectors ? &s.host : nullptr);
  const int k = k_arg > 0 ? k_arg : s.config.k;
  if (k > s.host.rows) {
    skip(st, "k exceeds the model's rows");
    return;
  }
  Breakdown bd;
  Means m;
  ExecOptions o;
  o.warmups = p->habits.copy_model_every_query ? 1 : -1;  // V1 moves the whole model on every query
  o.fixed_samples = p->habits.copy_model_every_query;     // the study's mean of 10 runs
  o.min_bytes = vector_bytes(s, s.host.rows, p->storage);
  // Each sample is two searches of the query: one with an event pair around each stage (the
  // breakdown), then one with only the first and last events, whose total is the time
  // reported (docs/methodology.md): the stage events are the harness's, not the pipeline's.
  Breakdown clean;
  o.on_sample = [&](double) {
    for (const auto& stage : bd.stages) m.add(stage.name + "_ms", stage.ms);
    m.add("kernel_ms", bd.kernel_ms());
    m.add("transfer_ms", bd.transfer_ms());
    m.add("overhead_ms", bd.overhead_ms());
    m.add("staged_total_ms", bd.total_ms);
    m.add("total_ms", clean.total_ms);
    m.add("wall_ms", clean.wall_ms);
    add_rates(m, clean.total_ms, 0, s.floor_for(p->storage));
  };
  auto work = [&](cudaStream_t) {
    bd = Breakdown{};
    searcher.search(*p, s.query.vector.data(), s.query.norm, k, &bd);
    clean = Breakdown{};
    clean.stage_events = false;
    searcher.search(*p, s.query.vector.data(), s.query.norm, k, &clean);
    return double(clean.total_ms);
  };
  if (!exec_timed(st, work, o)) return;
  m.publish(st);
  parameters(st, {{"k", double(k)}, {"rows", double(s.host.rows)}, {"dim", double(s.host.dim)}});
  // Pipelines with a certificate: the fraction of the timed queries it certified and the
  // fraction the fallback answered (its time is in total_ms); refusals by the range guard too.
  const auto& c = searcher.certificate_counts();
  const double queries = double(c.certified + c.uncertified + c.refused);
  if (queries > 0) {
    st.counters["certified_fraction"] = double(c.certified) / queries;
    st.counters["fallback_fraction"] = double(c.uncertified) / queries;
    st.counters["refused_fraction"] = double(c.refused) / queries;
  }
}

void cpu_fixture(benchmark::State& st) {
  const BenchState& s = bench_state();
  Means m;
  ExecOptions o;
  o.on_sample = [&](double ms) {
    m.add("total_ms", ms);
    add_rates(m, ms, 0);
  };
  const bool ok = exec_host(
      st,
      [&] {
        auto hits = sequential_search(s.host, s.query.vector.data(), s.query.norm, s.config.k);
        benchmark::DoNotOptimize(hits.data());
      },
      o);
  if (!ok) return;
  m.publish(st);
  parameters(st, {{"k", double(s.config.k)}, {"rows", double(s.host.rows)}, {"dim", double(s.host.dim)}});
}

// The study's Table 1: its query sequence once, each query timed (p null: the CPU).
void sequence_fixture(benchmark::State& st, const Pipeline* p) {
  const BenchState& s = bench_state();
  // One pass over the sequence; `one(q)` times one query in ms.
  auto pass = [&](const auto& one) {
    double total = 0;
    int i = 0;
    for (const auto& [word, q] : s.sequence) {
      const double ms = one(q);
      char name[64];
      std::snprintf(name, sizeof name, "q%02d_%s_ms", ++i, word.c_str());
      st.counters[name] = ms;
      total += ms;
    }
    st.counters["total_ms"] = total;
    return total;
  };
  parameters(st, {{"k", double(s.config.k)},
                  {"rows", double(s.host.rows)},
                  {"dim", double(s.host.dim)},
                  {"queries", double(s.sequence.size())}});
  if (!p) {  // the host clock around each query for its counter, the engine's around the pass
    ExecOptions o;
    o.warmups = 0;
    o.fixed_samples = true;
    exec_host(
        st,
        [&] {
          pass([&](const Query& q) {
            const auto t0 = std::chrono::steady_clock::now();
            auto hits = sequential_search(s.host, q.vector.data(), q.norm, s.config.k);
            benchmark::DoNotOptimize(hits.data());
            return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
          });
        },
        o);
    return;
  }
  // The searcher is made here, so query 1 also pays the first allocations (as in the study).
  GpuSearcher searcher(*s.device, &s.host);
  ExecOptions o;
  o.warmups = 0;
  o.fixed_samples = true;
  exec_timed(
      st,
      [&](cudaStream_t) {
        return pass([&](const Query& q) {
          Breakdown bd;
          searcher.search(*p, q, s.config.k, true, &bd);
          return double(bd.total_ms);
        });
      },
      o);
}

}  // namespace

// floor/read_model's kernel and block shape; the grid no larger than the data needs, so that a
// small read does not also pay for hundreds of idle blocks (from ~17 MB up it is the same launch).
void launch_best_read(const void* data, std::size_t bytes, float* sink, cudaStream_t s) {
  constexpr int kThreads = policy::Active::ReadFloor::kThreads, kUnroll = policy::Active::ReadFloor::kUnroll;
  const long long n4 = static_cast<long long>(bytes / sizeof(float4));
  const long long per_block = static_cast<long long>(kThreads) * kUnroll;
  const int grid = static_cast<int>(std::clamp<long long>((n4 + per_block - 1) / per_block, 1, floor_sink_len()));
  read_floor_kernel<kThreads, kUnroll><<<grid, kThreads, 0, s>>>(static_cast<const float4*>(data), n4, sink);
  CUDA_CHECK_LAUNCH();
}

double best_read_ms(const void* data, std::size_t bytes, int reps) {
  DeviceBuffer sink(static_cast<std::size_t>(floor_sink_len()) * sizeof(float), "floor sink");
  return reference_ms([&](cudaStream_t s) { launch_best_read(data, bytes, sink.as<float>(), s); }, reps, 3,
                      Pick::Least);
}

double best_read_bytes_per_s() {
  static const double rate = [] {
    constexpr std::size_t kBytes = std::size_t(1) << 30;
    DeviceBuffer buf(kBytes, "the best read's buffer");
    CUDA_CHECK(cudaMemset(buf.get(), 0, kBytes));
    return double(kBytes) / (best_read_ms(buf.get(), kBytes, 20) / 1e3);
  }();
  return rate;
}

double least_read_ms(double bytes) {
  const double cached = std::min(bytes, l2_credit_bytes());
  const double l2 = l2_peak_bytes_per_s() > 0 ? cached / l2_peak_bytes_per_s() : 0.0;
  return ((bytes - cached) / best_read_bytes_per_s() + l2) * 1e3;
}

void register_one_query_fixtures(bool gpu) {
  const BenchState& s = bench_state();
  if (gpu) {
    timed(add(FixtureName("floor", "read_model"), floor_fixture, Storage::F32));
    timed(add(FixtureName("floor", "read_model_16bit"), floor_fixture, Storage::F16));
    timed(add(FixtureName("floor", "read_model_8bit"), floor_fixture, Storage::I8));
    for (const DotVariant& v : dot_variants()) timed(add(FixtureName("dot", v.name), dot_fixture, &v));
    const DotVariant* input_dot = &dot_variant("warp_shuffle_dot");  // the stages' input, resolved here
    for (const TopkStage& t : topk_stages()) {
      const TopkStage* before = t.after ? &topk_stage(t.after) : nullptr;
      for (int k : kTopkKs)
        timed(add(FixtureName("topk", t.name).axis("k", k), topk_fixture, TopkCase{&t, before, input_dot, k, 0}));
      for (int rows : kTopkRowCounts)
        for (int k : {10, 100})
          timed(add(FixtureName("topk", t.name).axis("rows", rows).axis("k", k), topk_fixture,
                    TopkCase{&t, before, input_dot, k, rows}));
    }
    register_list_fixtures();
    for (const Pipeline& p : pipelines()) {
      auto* b = timed(add(FixtureName("pipeline", p.name), pipeline_fixture, &p, 0));
      if (p.habits.copy_model_every_query) b->Iterations(10);  // the study's mean of 10 runs; each moves the model
    }
    // The k axis (the runs' default k, 10, is the plain name above); V1 moves the model every
    // query and gains nothing from it.
    for (const Pipeline& p : pipelines())
      if (!p.habits.copy_model_every_query)
        for (int k : kPipelineKs) timed(add(FixtureName("pipeline", p.name).axis("k", k), pipeline_fixture, &p, k));
    if (s.host_vectors)
      for (const Pipeline& p : pipelines())
        if (p.study_sequence) timed(add(FixtureName("sequence", p.name), sequence_fixture, &p))->Iterations(1);
  }
  if (s.host_vectors) {
    timed(add(FixtureName("cpu", "sequential"), cpu_fixture))->Iterations(3);
    timed(add(FixtureName("sequence", "CPU"), sequence_fixture, static_cast<const Pipeline*>(nullptr)))->Iterations(1);
  }
}

}  // namespace distancies::bench
