#include "harness/bench/bench_state.hpp"
#include "harness/bench/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "harness/formats.hpp"
#include "harness/synthetic.hpp"
#include "runtime/error.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies::bench {
namespace {
BenchState* g_state = nullptr;
}

BenchState& bench_state() {
  if (!g_state) throw Error("benchmark state used before init_bench_state");
  return *g_state;
}

float measure_floor_ms(const void* data, std::size_t bytes, int reps) {
  DeviceBuffer sink(static_cast<std::size_t>(floor_sink_len()) * sizeof(float), "floor sink");
  return static_cast<float>(reference_ms([&](cudaStream_t s) { launch_read_floor(data, bytes, sink.as<float>(), s); },
                                         reps, 3, Pick::Median));
}

void init_bench_state(const BenchConfig& c) {
  auto s = std::make_unique<BenchState>();
  s->config = c;
  const auto t0 = std::chrono::steady_clock::now();
  const bool gpu = device_status().available;
  if (!c.model_path.empty()) {
    s->host = load_model(c.model_path);
    s->host_vectors = true;
    s->source = c.model_path;
    if (gpu) s->device = std::make_unique<DeviceModel>(upload_model(s->host));
  } else {
    s->family = make_family(c.family, c.dim);
    s->source = "synthetic seed " + std::to_string(c.seed) + ", family " + family_name(s->family);
    if (gpu) {
      s->device = std::make_unique<DeviceModel>(generate_synthetic_on_device(c.rows, c.dim, c.seed, 0, s->family));
      if (c.host_copy) {
        s->host = download_model(*s->device);
        s->host_vectors = true;
      } else {
        s->host.rows = c.rows;
        s->host.dim = c.dim;
        s->host.ld = leading_dim(c.dim);
      }
      s->host.words = synthetic_vocabulary(c.rows);
    } else {
      s->host = make_synthetic_model(c.rows, c.dim, c.seed, s->family);
      s->host_vectors = true;
    }
    s->host.format = "synthetic";
  }
  auto query_of = [&](const std::string& text) {
    if (s->host_vectors) return make_query(s->host, text);
    // No host vectors: fetch the query's rows from the device model.
    Query q;
    q.text = text;
    q.vector.assign(static_cast<std::size_t>(s->host.dim), 0.0f);
    for (const Term& t : parse_expression(text)) {
      const std::int64_t r = s->host.find(t.word);
      if (r < 0) throw Error("unknown word: '" + t.word + "'");
      std::vector<float> v(static_cast<std::size_t>(s->host.dim));
      CUDA_CHECK(cudaMemcpy(v.data(), s->device->d_vectors() + r * s->host.ld, v.size() * sizeof(float),
                            cudaMemcpyDeviceToHost));
      for (int j = 0; j < s->host.dim; ++j) q.vector[j] += t.sign * v[j];
      q.word_rows.push_back(static_cast<std::int32_t>(r));
    }
    q.norm = vector_norm(q.vector.data(), s->host.dim);
    return q;
  };
  s->query = query_of(c.query);
  for (const char* w : {"ring", "key", "key", "key", "ring", "king", "king", "ring", "barca", "messi"})
    if (s->host.find(w) >= 0) s->sequence.emplace_back(w, query_of(w));
  if (s->device) {
    s->floor_ms = measure_floor_ms(s->device->d_vectors(), s->device->vector_bytes(), 20);
    const ReducedCopy& half = prepared_reduced(*s->device, Storage::F16);
    s->floor_half_ms = measure_floor_ms(half.data.get(), half.data.bytes(), 20);
    const ReducedCopy& i8 = prepared_reduced(*s->device, Storage::I8);
    s->floor_i8_ms = measure_floor_ms(i8.data.get(), i8.data.bytes(), 20);
  }
  std::fprintf(stderr, "distancies-bench: %s, %lld x %d, ready in %.1f s%s\n", s->source.c_str(),
               static_cast<long long>(s->host.rows), s->host.dim,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
               gpu ? "" : " (no GPU: CPU fixtures only)");
  g_state = s.release();
}

}  // namespace distancies::bench
