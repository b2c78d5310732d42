// Fixture families registered in loops over the registry. Device work is timed with CUDA
// events and reported through UseManualTime; derived rates are counters.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/cpu_search.hpp"
#include "harness/gpu_search.hpp"
#include "harness/precision.hpp"
#include "variants/registry.hpp"

namespace distancies::bench {
namespace {

const int kTopkKs[] = {1, 10, 100, 1024};
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
  return {dm.d_vectors(), dm.d_norms(), static_cast<int>(dm.rows), dm.dim, dm.ld, ws.query.as<float>(), s.query.norm,
          ws.sims.as<float>(), ws.idx.as<int>()};
}

// storage: which copy is read (F32: the model; F16: its 16-bit copy, half the bytes).
void floor_fixture(benchmark::State& st, Storage storage) {
  const BenchState& s = bench_state();
  const void* data = s.device->d_vectors();
  std::size_t bytes = s.device->vector_bytes();
  if (storage != Storage::F32) {
    data = s.device->reduced(storage).data.get();
    bytes = s.device->reduced(storage).bytes();
  }
  const double floor = storage == Storage::F32 ? s.floor_ms : s.floor_half_ms;
  DeviceBuffer sink(static_cast<std::size_t>(floor_sink_len()) * sizeof(float), "floor sink");
  Event a, b;
  for (int i = 0; i < kWarmups; ++i) launch_read_floor(data, bytes, sink.as<float>(), nullptr);
  Means m;
  for (auto _ : st) {
    a.record(nullptr);
    launch_read_floor(data, bytes, sink.as<float>(), nullptr);
    b.record(nullptr);
    const float ms = elapsed_ms(a, b);
    st.SetIterationTime(ms / 1e3);
    m.add("kernel_ms", ms);
    add_rates(m, ms, double(bytes), floor);
  }
  m.publish(st);
}

void dot_fixture(benchmark::State& st, const DotVariant* v) {
  const BenchState& s = bench_state();
  Workspace ws;
  ws.allocate(static_cast<int>(s.host.rows), 1, s.host.dim, 0);
  upload_query(ws, s.query);
  const DotArgs args = dot_args(s, ws);
  for (int i = 0; i < kWarmups; ++i) v->launch(args, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  Event a, b;
  Means m;
  for (auto _ : st) {
    a.record(nullptr);
    v->launch(args, nullptr);
    b.record(nullptr);
    const float ms = elapsed_ms(a, b);
    st.SetIterationTime(ms / 1e3);
    m.add("kernel_ms", ms);
    add_rates(m, ms, dot_bytes(s));
  }
  m.publish(st);
}

// Each iteration restores the stage's input (untimed): the study's stages work in place.
// rows: the first `rows` rows of the model (0: all).
void topk_fixture(benchmark::State& st, const TopkStage* stage, int k, int rows) {
  const BenchState& s = bench_state();
  const int n = rows > 0 ? std::min(rows, static_cast<int>(s.host.rows)) : static_cast<int>(s.host.rows);
  Workspace ws;
  ws.allocate(n, k, s.host.dim, stage->temp_bytes(n, k));
  upload_query(ws, s.query);
  DotArgs args = dot_args(s, ws);
  args.rows = n;
  dot_variant("warp_shuffle_dot").launch(args, nullptr);
  TopkState input = ws.topk_state();
  // Stages that scan the model themselves time the whole pass; 16-bit ones read the fp16 copy.
  auto attach_model = [&](TopkState& t) {
    t.dot = &args;
    if (stage->scans_model) {
      const auto& half = s.device->reduced(Storage::F16);
      t.reduced = half.data.get();
      t.storage = Storage::F16;
      t.reduced_ld = reduced_leading_dim(s.host.dim);
      t.error_bound = reduced_error_bound(Storage::F16, s.host.dim, s.query.vector.data(), s.query.norm, half.min_norm);
    }
  };
  attach_model(input);
  if (stage->after) topk_stage(stage->after).run(input, nullptr);
  const std::size_t bytes = ws.capacity * sizeof(float);
  DeviceBuffer keep_s(bytes, "pristine sims"), keep_i(bytes, "pristine indices");
  CUDA_CHECK(cudaMemcpy(keep_s.get(), input.sims, bytes, cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpy(keep_i.get(), input.idx, bytes, cudaMemcpyDeviceToDevice));
  auto restore = [&] {
    TopkState t = ws.topk_state();
    t.chunks = input.chunks;
    attach_model(t);
    CUDA_CHECK(cudaMemcpyAsync(t.sims, keep_s.get(), bytes, cudaMemcpyDeviceToDevice, nullptr));
    CUDA_CHECK(cudaMemcpyAsync(t.idx, keep_i.get(), bytes, cudaMemcpyDeviceToDevice, nullptr));
    return t;
  };
  for (int i = 0; i < kWarmups; ++i) {
    TopkState t = restore();
    stage->run(t, nullptr);
  }
  Event a, b;
  Means m;
  for (auto _ : st) {
    TopkState t = restore();
    a.record(nullptr);
    stage->run(t, nullptr);
    b.record(nullptr);
    const float ms = elapsed_ms(a, b);
    st.SetIterationTime(ms / 1e3);
    m.add("kernel_ms", ms);
    m.add("distances_per_ms", double(n) / ms);
  }
  m.publish(st);
  st.counters["k"] = k;
  st.counters["rows"] = n;
}

void pipeline_fixture(benchmark::State& st, const Pipeline* p) {
  const BenchState& s = bench_state();
  if (p->habits.copy_model_every_query && !s.host_vectors) {
    st.SkipWithError("needs the host copy of the model (run without --no-host-copy)");
    return;
  }
  GpuSearcher searcher(*s.device, s.host_vectors ? &s.host : nullptr);
  const int k = s.config.k;
  for (int i = 0; i < (p->habits.copy_model_every_query ? 1 : kWarmups); ++i)
    searcher.search(*p, s.query.vector.data(), s.query.norm, k);
  Means m;
  for (auto _ : st) {
    Breakdown bd;
    searcher.search(*p, s.query.vector.data(), s.query.norm, k, &bd);
    st.SetIterationTime(bd.total_ms / 1e3);
    for (const auto& stage : bd.stages) m.add(stage.name + "_ms", stage.ms);
    m.add("kernel_ms", bd.kernel_ms());
    m.add("transfer_ms", bd.transfer_ms());
    m.add("overhead_ms", bd.overhead_ms());
    m.add("total_ms", bd.total_ms);
    m.add("wall_ms", bd.wall_ms);
    add_rates(m, bd.total_ms, 0, p->storage == Storage::F32 ? s.floor_ms : s.floor_half_ms);
  }
  m.publish(st);
}

void cpu_fixture(benchmark::State& st) {
  const BenchState& s = bench_state();
  Means m;
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    auto hits = sequential_search(s.host, s.query.vector.data(), s.query.norm, s.config.k);
    benchmark::DoNotOptimize(hits.data());
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    st.SetIterationTime(ms / 1e3);
    m.add("total_ms", ms);
    add_rates(m, ms, 0);
  }
  m.publish(st);
}

// The study's Table 1: its query sequence once, each query timed (p null: the CPU).
void sequence_fixture(benchmark::State& st, const Pipeline* p) {
  const BenchState& s = bench_state();
  std::unique_ptr<GpuSearcher> searcher;
  if (p) searcher = std::make_unique<GpuSearcher>(*s.device, &s.host);
  for (auto _ : st) {
    double total = 0;
    int i = 0;
    for (const auto& [word, q] : s.sequence) {
      double ms;
      if (p) {
        Breakdown bd;
        searcher->search(*p, q, s.config.k, true, &bd);
        ms = bd.total_ms;
      } else {
        const auto t0 = std::chrono::steady_clock::now();
        auto hits = sequential_search(s.host, q.vector.data(), q.norm, s.config.k);
        benchmark::DoNotOptimize(hits.data());
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      }
      char name[64];
      std::snprintf(name, sizeof name, "q%02d_%s_ms", ++i, word.c_str());
      st.counters[name] = ms;
      total += ms;
    }
    st.SetIterationTime(total / 1e3);
    st.counters["total_ms"] = total;
  }
}

}  // namespace

void register_fixtures(bool gpu) {
  const BenchState& s = bench_state();
  if (gpu) {
    timed(add("floor/read_model", floor_fixture, Storage::F32));
    timed(add("floor/read_model_16bit", floor_fixture, Storage::F16));
    for (const DotVariant& v : dot_variants()) timed(add("dot/" + std::string(v.name), dot_fixture, &v));
    for (const TopkStage& t : topk_stages()) {
      for (int k : kTopkKs) timed(add("topk/" + std::string(t.name) + "/k:" + std::to_string(k), topk_fixture, &t, k, 0));
      for (int rows : kTopkRowCounts)
        for (int k : {10, 100})
          timed(add("topk/" + std::string(t.name) + "/rows:" + std::to_string(rows) + "/k:" + std::to_string(k),
                    topk_fixture, &t, k, rows));
    }
    register_list_fixtures();
    for (const Pipeline& p : pipelines()) {
      auto* b = timed(add("pipeline/" + std::string(p.name), pipeline_fixture, &p));
      if (p.habits.copy_model_every_query) b->Iterations(10);  // the study's mean of 10 runs; each moves the model
    }
    if (s.host_vectors)
      for (const Pipeline& p : pipelines())
        if (p.origin[0] == 'V') timed(add("sequence/" + std::string(p.name), sequence_fixture, &p))->Iterations(1);
  }
  if (s.host_vectors) {
    timed(add("cpu/sequential", cpu_fixture))->Iterations(3);
    timed(add("sequence/CPU", sequence_fixture, static_cast<const Pipeline*>(nullptr)))->Iterations(1);
  }
  if (gpu) register_batch_fixtures();
  register_intersect_fixtures(gpu);
}

}  // namespace distancies::bench
