// Beyond one GPU's memory and beyond one GPU (docs/scale.md):
//   floor/h2d_pinned                          the page-locked host model copied to the GPU, in the
//                                             stream's chunk size, nothing else: the stream's floor
//   stream/<pipeline>/memory:half             one query, the model streamed with half its bytes as
//                                             the GPU memory budget
//   stream/<batch pipeline>/memory:half/batch:B
//   stream_sweep/fused/chunk_mb:M/buffers:N   the chunk policy's sweep (no memory limit)
//   stream/<pipeline>/rows:R[/batch:B]        with --stream-rows R: a synthetic model of R rows made
//                                             in page-locked host memory only (larger than the GPU)
//   shard/<pipeline>/gpus:G/batch:B           every pipeline (V1 and the per-query loop aside)
//                                             sharded over the G ranks this process belongs to
//                                             (scripts/shard_launch.sh; G = 1 alone)
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "harness/scale/shard_search.hpp"
#include "harness/scale/stream_search.hpp"
#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/policy.hpp"

namespace distancies::bench {
namespace {

const int kStreamBatches[] = {16, 128, 1024};
const int kShardBatches[] = {1, 16, 128, 1024, 8192};

// Bytes an element of the cheapest copy a pipeline reads (the refusal's least bytes).
double element_bytes_read(const Pipeline* one, const BatchPipeline* many) {
  if (many) return read_element_bytes(*many);
  return one->storage == Storage::I8 ? 1.0 : one->storage == Storage::F32 ? 4.0 : 2.0;
}
const int kSweepChunkMb[] = {32, 64, 128, 256, 512, 1024};
const int kSweepBuffers[] = {2, 3};

// What the fixtures keep between cases, released before exit (an NCCL communicator destroyed
// during static teardown, after the CUDA runtime's, can crash).
struct ScaleState {
  std::unique_ptr<PinnedModel> normal, big;
  std::unique_ptr<DeviceBuffer> slot[2];
  std::unique_ptr<NcclComm> comm;
  std::string comm_failed;
  std::unique_ptr<ShardSearcher> shard, replica;
};
ScaleState& scale_state() {
  static ScaleState s;
  return s;
}

// The bench model page-locked where it is (its host copy), else the synthetic one made again in
// page-locked memory; or, with --stream-rows, the large synthetic model.
const PinnedModel& pinned_model(bool large) {
  std::unique_ptr<PinnedModel>& normal = scale_state().normal;
  std::unique_ptr<PinnedModel>& big = scale_state().big;
  const BenchState& s = bench_state();
  std::unique_ptr<PinnedModel>& pm = large ? big : normal;
  if (!pm) {
    if (large)
      pm = std::make_unique<PinnedModel>(
          PinnedModel::synthetic(s.config.stream_rows, s.config.dim, s.config.seed, s.family));
    else if (s.host_vectors)
      pm = std::make_unique<PinnedModel>(PinnedModel::register_model(s.host));
    else
      pm = std::make_unique<PinnedModel>(PinnedModel::synthetic(s.host.rows, s.host.dim, s.config.seed, s.family));
  }
  return *pm;
}

// Queries: the bench's query vector, and for batches rows of the model as in batch/*.
std::vector<float> stream_queries(const HostRows& r, int batch, std::vector<float>& norms) {
  std::vector<float> q(static_cast<std::size_t>(batch) * r.dim);
  norms.clear();
  for (int b = 0; b < batch; ++b) {
    const long long row = (static_cast<long long>(b) * 104729) % r.rows;
    std::copy(r.vectors + row * r.ld, r.vectors + row * r.ld + r.dim, q.begin() + static_cast<std::size_t>(b) * r.dim);
    norms.push_back(r.norms[row]);
  }
  return q;
}

void floor_h2d_fixture(benchmark::State& st) {
  const HostRows& r = pinned_model(false).rows();
  const std::size_t chunk = policy::Active::StreamChunks::kChunkBytes, bytes = r.vector_bytes();
  auto& slot = scale_state().slot;
  if (!slot[0])
    for (auto& b : slot) b = std::make_unique<DeviceBuffer>(chunk, "h2d floor slot");
  exec_kernel(
      st,
      [&](cudaStream_t s) {
        const char* src = reinterpret_cast<const char*>(r.vectors);
        int i = 0;
        for (std::size_t off = 0; off < bytes; off += chunk, i ^= 1)
          CUDA_CHECK(
              cudaMemcpyAsync(slot[i]->get(), src + off, std::min(chunk, bytes - off), cudaMemcpyHostToDevice, s));
      },
      double(bytes));
  st.counters["bytes"] = double(bytes);
  st.counters["chunk_bytes"] = double(chunk);
}

struct StreamCase {
  const Pipeline* one = nullptr;
  const BatchPipeline* many = nullptr;
  int batch = 1;
  bool half_memory = false;  // budget = half the model's bytes
  bool large = false;        // the --stream-rows model
  int chunk_mb = 0, buffers = 0;
};

void stream_fixture(benchmark::State& st, StreamCase c) {
  const BenchState& s = bench_state();
  const HostRows& r = pinned_model(c.large).rows();
  StreamOptions so;
  if (c.half_memory) so.gpu_memory_limit = r.vector_bytes() / 2;
  if (c.chunk_mb) so.chunk_rows = static_cast<std::int64_t>((std::size_t(c.chunk_mb) << 20) / r.row_bytes());
  so.buffers = c.buffers;
  StreamSearcher searcher(r, so);
  std::vector<float> norms;
  const std::vector<float> q = stream_queries(r, c.batch, norms);
  const int k = s.config.k;
  Breakdown bd;
  Means m;
  ExecOptions o;
  o.warmups = 1;
  o.min_bytes = double(r.vector_bytes()) * 0.1;  // the device reads it all; the refusal guards the copy itself
  o.on_sample = [&](double ms) {
    const StreamStats& t = searcher.last();
    for (const auto& stage : bd.stages) m.add(stage.name + "_ms", stage.ms);
    m.add("total_ms", ms);
    m.add("copy_ms", t.copy_ms);
    m.add("h2d_gb_per_s", t.h2d_gb_per_s());
    m.add("copy_gb_per_s", t.copy_ms > 0 ? t.bytes / (t.copy_ms * 1e6) : 0);
    m.add("fallbacks", t.fallbacks);
    m.add("queries_per_s", c.batch / (ms / 1e3));
  };
  auto work = [&](cudaStream_t) {
    if (c.many)
      searcher.search(*c.many, q.data(), norms.data(), c.batch, k, &bd);
    else
      searcher.search(*c.one, q.data(), norms[0], k, &bd);
    return double(searcher.last().total_ms);
  };
  if (!exec_timed(st, work, o)) return;
  m.publish(st);
  st.SetLabel(searcher.last().streamed);
  const StreamLayout& l = searcher.last().layout;
  parameters(st, {{"batch", double(c.batch)},
                  {"k", double(k)},
                  {"rows", double(r.rows)},
                  {"dim", double(r.dim)},
                  {"chunk_rows", double(l.chunk_rows)},
                  {"chunks", double(l.chunks)},
                  {"buffers", double(l.buffers)},
                  {"gpu_memory_limit", double(so.gpu_memory_limit)},
                  {"bytes", double(searcher.last().bytes)},
                  {"centred_chunks", double(searcher.last().centred_chunks)},
                  {"host_copy_ms", double(searcher.last().host_copy_ms)}});
}

NcclComm* group_comm(std::string* why) {
  std::unique_ptr<NcclComm>& comm = scale_state().comm;
  std::string& failed = scale_state().comm_failed;
  if (!comm && failed.empty()) {
    try {
      if (!nccl_available(&failed)) return nullptr;
      const char* w = std::getenv("DISTANCIES_WORLD_SIZE");
      const ProcessGroup g = process_group_from_env(w ? std::atoi(w) : 1);
      CUDA_CHECK(cudaSetDevice(g.local_rank));
      comm = std::make_unique<NcclComm>(g);
    } catch (const std::exception& e) {
      failed = e.what();
    }
  }
  if (!comm && why) *why = failed;
  return comm.get();
}

// Each rank's shard made on its GPU (the synthetic model's rows) or copied from the host copy.
ShardSearcher& shard_searcher(NcclComm& comm) {
  std::unique_ptr<ShardSearcher>& sh = scale_state().shard;
  if (!sh) {
    const BenchState& s = bench_state();
    // --shard-rows: a synthetic model of that many rows of which each rank makes only its shard
    // (larger than one GPU, no host copy); else the bench model.
    const bool own = s.config.shard_rows > 0;
    const std::int64_t rows = own ? s.config.shard_rows : s.host.rows;
    const auto [lo, hi] = shard_rows(rows, comm.rank(), comm.size());
    DeviceModel shard = s.host_vectors && !own
                            ? upload_rows(host_rows(s.host).slice(lo, hi))
                            : generate_synthetic_on_device(hi - lo, s.host.dim, s.config.seed, lo, s.family);
    sh = std::make_unique<ShardSearcher>(comm, std::move(shard), lo, rows);
  }
  return *sh;
}

// Every rank holding every row (the bench model, or its synthetic rows made again on each GPU).
ShardSearcher& replica_searcher(NcclComm& comm) {
  std::unique_ptr<ShardSearcher>& sh = scale_state().replica;
  if (!sh) {
    const BenchState& s = bench_state();
    DeviceModel whole = s.host_vectors
                            ? upload_rows(host_rows(s.host))
                            : generate_synthetic_on_device(s.host.rows, s.host.dim, s.config.seed, 0, s.family);
    sh = std::make_unique<ShardSearcher>(comm, std::move(whole));
  }
  return *sh;
}

// One sharded search timed: `split` Rows on the row shards (shard/...), else on replicas
// (replica/..., the split given or chosen).
void shard_fixture(benchmark::State& st, const Pipeline* one, const BatchPipeline* many, int batch,
                   std::optional<Split> split) {
  std::string why;
  NcclComm* comm = group_comm(&why);
  if (!comm) return skip(st, "no NCCL communicator: " + why);
  const BenchState& s = bench_state();
  if (split && s.config.shard_rows > 0) return skip(st, "--shard-rows makes each rank's rows alone: no replicas");
  ShardSearcher& sh = split ? replica_searcher(*comm) : shard_searcher(*comm);
  if (split) sh.set_split(*split);
  const HostRows r = s.host_vectors ? host_rows(s.host) : pinned_model(false).rows();
  std::vector<float> norms;
  const std::vector<float> q = stream_queries(r, batch, norms);
  Breakdown bd;
  Means m;
  ExecOptions o;
  o.warmups = 1;
  o.fixed_samples = true;  // every rank must run the same number of collectives (Iterations above)
  o.min_bytes = double(sh.shard_rows()) * s.host.dim * element_bytes_read(one, many);
  o.on_sample = [&](double ms) {
    // Each stage of this rank's search (the scan, the re-rank, the transfers ...) beside the
    // exchange: where a shard's time goes as G grows.
    std::map<std::string, double> by_name;
    for (const auto& stage : bd.stages)
      if (stage.name != "shard_exchange") by_name[stage.name + "_ms"] += stage.ms;
    for (const auto& [name, v] : by_name) m.add(name, v);
    m.add("search_ms", bd.total_ms - bd.stage_ms("shard_exchange"));
    m.add("total_ms", ms);
    m.add("exchange_ms", bd.stage_ms("shard_exchange"));
    m.add("queries_per_s", batch / (ms / 1e3));
    m.add("fallbacks", sh.last_fallbacks());
  };
  auto work = [&](cudaStream_t) {
    bd = Breakdown{};
    if (many)
      sh.search(*many, q.data(), norms.data(), batch, s.config.k, &bd);
    else
      sh.search(*one, q.data(), norms[0], s.config.k, &bd);
    return bd.wall_ms;
  };
  if (!exec_timed(st, work, o)) return;
  m.publish(st);
  if (split) st.SetLabel(std::string("split:") + split_name(sh.last_split()));
  parameters(st, {{"gpus", double(comm->size())},
                  {"rank", double(comm->rank())},
                  {"batch", double(batch)},
                  {"k", double(s.config.k)},
                  {"rows", double(s.config.shard_rows > 0 ? s.config.shard_rows : s.host.rows)},
                  {"shard_rows", double(sh.shard_rows())}});
}

}  // namespace

void release_scale_fixtures() {
  ScaleState& s = scale_state();
  s.shard.reset();
  s.replica.reset();
  s.comm.reset();
  s.slot[0].reset();
  s.slot[1].reset();
  s.normal.reset();
  s.big.reset();
}

void register_scale_fixtures() {
  const BenchState& s = bench_state();
  timed(add(FixtureName("floor", "h2d_pinned"), floor_h2d_fixture));
  for (const char* name : {"fused", "fused_f16", "fused_i8"}) {
    StreamCase c;
    c.one = &pipeline(name);
    c.half_memory = true;
    timed(add(FixtureName("stream", name).axis("memory", "half"), stream_fixture, c));
  }
  for (const char* name : {"batch_f16_h", "batch_tf32"})
    for (int b : kStreamBatches) {
      StreamCase c;
      c.many = &batch_pipeline(name);
      c.batch = b;
      c.half_memory = true;
      timed(add(FixtureName("stream", name).axis("memory", "half").axis("batch", b), stream_fixture, c));
    }
  for (int mb : kSweepChunkMb)
    for (int n : kSweepBuffers) {
      StreamCase c;
      c.one = &exact_pipeline();
      c.chunk_mb = mb;
      c.buffers = n;
      timed(add(FixtureName("stream_sweep", "fused").axis("chunk_mb", mb).axis("buffers", n), stream_fixture, c));
    }
  if (s.config.stream_rows > 0) {
    const long long rows = s.config.stream_rows;
    StreamCase c;
    c.large = true;
    c.one = &exact_pipeline();
    timed(add(FixtureName("stream", "fused").axis("rows", rows), stream_fixture, c))->Iterations(3);
    c.one = &pipeline("fused_i8");  // its int8 copy streamed from host memory: a quarter of the bytes
    timed(add(FixtureName("stream", "fused_i8").axis("rows", rows), stream_fixture, c))->Iterations(5);
    c.one = nullptr;
    c.many = &batch_pipeline("batch_f16_h");
    c.batch = 1024;
    timed(add(FixtureName("stream", "batch_f16_h").axis("rows", rows).axis("batch", 1024), stream_fixture, c))
        ->Iterations(3);
  }
  const char* w = std::getenv("DISTANCIES_WORLD_SIZE");
  // The shard's axes: its rows where they are set, and the ranks.
  const auto shard = [&](const char* pipeline) {
    FixtureName f("shard", pipeline);
    if (s.config.shard_rows > 0) f.axis("rows", static_cast<long long>(s.config.shard_rows));
    return f.axis("gpus", w ? std::atoi(w) : 1);
  };
  // Fixed iteration counts (about a second each): every rank must run the same number of
  // collectives, which Google Benchmark's own choice (from each rank's timing) would not give.
  // Every one-query pipeline but V1 (it copies the whole model from pageable memory each query)
  // and every batch pipeline but the per-query loop, at each batch size.
  const std::optional<Split> rows_alone;
  for (const Pipeline& p : pipelines())
    if (!p.habits.copy_model_every_query)
      timed(add(shard(p.name).axis("batch", 1), shard_fixture, &p, nullptr, 1, rows_alone))->Iterations(300);
  for (const BatchPipeline& p : batch_pipelines())
    if (!p.per_query_pipeline)
      for (int b : kShardBatches)
        timed(add(shard(p.name).axis("batch", b), shard_fixture, nullptr, &p, b, rows_alone))
            ->Iterations(std::max(5, 2000 / b));
  // Replicas: every rank holds every row; a batch split by rows, by queries, or as Auto chooses.
  for (const BatchPipeline& p : batch_pipelines())
    if (!p.per_query_pipeline)
      for (const Split sp : {Split::Rows, Split::Queries, Split::Auto})
        for (int b : kShardBatches) {
          FixtureName f("replica", p.name);
          f.axis("gpus", w ? std::atoi(w) : 1).axis("split", split_name(sp)).axis("batch", b);
          timed(add(f, shard_fixture, nullptr, &p, b, std::optional<Split>(sp)))->Iterations(std::max(5, 2000 / b));
        }
}

}  // namespace distancies::bench
