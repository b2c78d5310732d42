#include "harness/embeddings/batch_search.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cublas_check.hpp"
#include "runtime/env_setting.hpp"
#include "runtime/launch.hpp"
#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/precision.hpp"

namespace distancies {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// Adds `from`'s stages into `into`, one entry per stage name.
void add_stages(Breakdown& into, const Breakdown& from) {
  for (const auto& s : from.stages) {
    auto it =
        std::find_if(into.stages.begin(), into.stages.end(), [&](const StageTime& t) { return t.name == s.name; });
    if (it == into.stages.end())
      into.stages.push_back(s);
    else
      it->ms += s.ms;
  }
  into.total_ms += from.total_ms;
}

}  // namespace

// Device scratch for one sub-batch, plus what lives as long as the searcher.
struct BatchSearcher::Buffers {
  DeviceBuffer inv_norms;  // rows, made again by every search (a streamed chunk's rows change under it)
  struct Pass {
    GemmInput input = GemmInput::F32;
    Storage scores_type = Storage::F32;
    const BatchScanRow* scan = nullptr;
    int batch = 0, k = 0, tile = 0;
    std::size_t list_entries = 0;
    DeviceBuffer queries, norms, queries_g, lists_s, lists_r, out_s, out_r, status, shifts, trace, trace_counts;
    std::vector<DeviceBuffer> scratch;  // the scan's own, in the order its scratch() gives
    std::vector<void*> scratch_ptrs;
  };
  // One pass's scratch a scan kind (input, scores, scan), so that a fallback's few queries on
  // another pipeline do not free and remake the batch's scratch; `pass` is the current one.
  std::vector<std::unique_ptr<Pass>> passes;
  Pass* pass = nullptr;
  PinnedBuffer pinned;
  CublasHandle cublas;
  Event marks[6];
  Event tile_events[4] = {Event(Event::Timing::Off), Event(Event::Timing::Off), Event(Event::Timing::Off),
                          Event(Event::Timing::Off)};
};

BatchSearcher::BatchSearcher(DeviceModel& model, Options opt) : model_(model), opt_(opt) {
  // DISTANCIES_WIDE_RERANK=off: to measure what it gains.
  opt_.wide_rerank = opt_.wide_rerank && env_setting("DISTANCIES_WIDE_RERANK", {"on", "off"}, "on") == "on";
  opt_.trace = opt_.trace || env_setting("DISTANCIES_BATCH_TRACE", {"on", "off"}, "off") == "on";
  require_device();
  stream_ = Stream(cudaStreamNonBlocking);
  side_ = Stream(cudaStreamNonBlocking);
  buf_ = std::make_unique<Buffers>();
  set_batch_math_mode(buf_->cublas.get());
  buf_->inv_norms = DeviceBuffer(static_cast<std::size_t>(std::max<std::int64_t>(model.rows, 1)) * sizeof(float),
                                 "inverse row norms");
  const auto t0 = clock_type::now();
  DeviceBuffer scratch(kBatchWarmUpBytes, "cuBLAS warm-up");
  batch_gemm_warm_up(buf_->cublas.get(), stream_.get(), scratch.get());
  startup_ms_ = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// Members go in reverse order: the per-query searcher, the buffers and cuBLAS, then the streams.
BatchSearcher::~BatchSearcher() = default;

std::vector<std::vector<Hit>> BatchSearcher::search(const BatchPipeline& p, const float* queries, const float* norms,
                                                    int batch, int k, Breakdown* bd) {
  const auto wall0 = clock_type::now();
  if (k <= 0) throw Error("k must be at least 1");
  if (batch < 0) throw Error("a batch cannot have a negative size");
  fallbacks_ = 0;
  refused_ = 0;
  widened_ = 0;
  host_ = HostTimes{};
  trace_.clear();
  if (bd) *bd = Breakdown{};
  std::vector<std::vector<Hit>> out;
  if (p.per_query_pipeline) {
    out = run_per_query(*p.per_query_pipeline, queries, norms, batch, k, bd);
  } else {
    out = run_tiles(p, queries, norms, batch, k, bd);
  }
  if (bd) bd->wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - wall0).count();
  return out;
}

PackedQueries pack_queries(const std::vector<Query>& qs, int dim, int k, bool keep_query_words, std::int64_t rows) {
  if (k <= 0) throw Error("k must be at least 1");
  PackedQueries p;
  p.vectors.resize(qs.size() * static_cast<std::size_t>(dim));
  p.norms.resize(qs.size());
  for (std::size_t i = 0; i < qs.size(); ++i) {
    if (static_cast<int>(qs[i].vector.size()) != dim) throw Error("query '" + qs[i].text + "' has the wrong dimension");
    std::memcpy(p.vectors.data() + i * dim, qs[i].vector.data(), dim * sizeof(float));
    p.norms[i] = qs[i].norm;
    p.k = std::max(p.k, request_k(qs[i], k, keep_query_words, rows));
  }
  return p;
}

void finish_queries(std::vector<std::vector<Hit>>& out, const std::vector<Query>& qs, int k, bool keep_query_words) {
  for (std::size_t i = 0; i < qs.size(); ++i) {
    if (!keep_query_words) out[i] = drop_excluded(out[i], qs[i].word_rows, k);
    if (static_cast<int>(out[i].size()) > k) out[i].resize(static_cast<std::size_t>(k));
  }
}

std::vector<std::vector<Hit>> BatchSearcher::search(const BatchPipeline& p, const std::vector<Query>& qs, int k,
                                                    bool keep_query_words, Breakdown* bd) {
  const PackedQueries q = pack_queries(qs, model_.dim, k, keep_query_words, model_.rows);
  auto out = search(p, q.vectors.data(), q.norms.data(), q.batch(), q.k, bd);
  finish_queries(out, qs, k, keep_query_words);
  return out;
}

std::vector<std::vector<Hit>> BatchSearcher::run_per_query(const Pipeline& p, const float* queries, const float* norms,
                                                           int batch, int k, Breakdown* bd) {
  if (!one_) one_ = std::make_unique<GpuSearcher>(model_, nullptr);
  std::vector<std::vector<Hit>> out(static_cast<std::size_t>(batch));
  Breakdown one;
  for (int i = 0; i < batch; ++i) {
    out[i] = one_->search(p, queries + static_cast<std::size_t>(i) * model_.dim, norms[i], k, bd ? &one : nullptr);
    if (bd) add_stages(*bd, one);
  }
  sub_batch_ = 1;
  return out;
}

std::vector<std::vector<Hit>> BatchSearcher::run_fallback(const BatchPipeline& p, const float* queries,
                                                          const float* norms, const std::vector<int>& which, int k,
                                                          Breakdown* bd) {
  const int dim = model_.dim;
  std::vector<float> q(which.size() * static_cast<std::size_t>(dim));
  std::vector<float> n(which.size());
  for (std::size_t i = 0; i < which.size(); ++i) {
    std::memcpy(q.data() + i * dim, queries + static_cast<std::size_t>(which[i]) * dim, dim * sizeof(float));
    n[i] = norms[which[i]];
  }
  Breakdown fb;
  const int outer = fallbacks_, outer_refused = refused_, outer_widened = widened_;  // the nested search resets them
  std::vector<CertificateTrace> outer_trace = std::move(trace_);                     // (the batch's certificates)
  const HostTimes outer_host = std::exchange(host_, HostTimes{});
  // The subset is uploaded from the host: device queries, if set, are the whole batch's.
  const float* dq = std::exchange(dev_queries_, nullptr);
  const float* dn = std::exchange(dev_norms_, nullptr);
  auto out =
      p.fallback_pipeline
          ? search(*p.fallback_pipeline, q.data(), n.data(), static_cast<int>(which.size()), k, bd ? &fb : nullptr)
          : run_per_query(exact_pipeline(), q.data(), n.data(), static_cast<int>(which.size()), k, bd ? &fb : nullptr);
  dev_queries_ = dq;
  dev_norms_ = dn;
  fallbacks_ = outer + static_cast<int>(which.size());
  refused_ = outer_refused;
  widened_ += outer_widened;  // and the fallback's own
  trace_ = std::move(outer_trace);
  host_.setup_ms += outer_host.setup_ms;  // the fallback's host time adds to the batch's
  host_.staging_ms += outer_host.staging_ms;
  host_.answers_ms += outer_host.answers_ms;
  if (bd) {
    bd->stages.push_back({"fallback", false, fb.total_ms});
    bd->total_ms += fb.total_ms;
  }
  return out;
}

// What the scan's own scratch and its binding depend on, for a pass of n queries.
ScanShape BatchSearcher::scan_shape(const BatchPipeline& p, int n, int kk, int tile) const {
  return ScanShape{p.input, p.scores, n, model_.dim, model_.ld, kk, BatchPolicy::candidates(kk), tile, model_.rows};
}

// The copies the pass reads, made now: the GEMM input's 16-bit copy and the scan's own, each
// centred_or_plain where the scan filters an fp16 GEMM (model_copies.hpp).
BatchSearcher::Copies BatchSearcher::prepare_copies(const BatchPipeline& p) {
  Copies c;
  const BatchScanRow& scan = *p.scan_row;
  if (scan.filters && p.input == GemmInput::F16) {
    prepare_copy(model_, centre_copy_row());
    c.centre = used_centre(model_);
  }
  if (p.input == GemmInput::BF16 || p.input == GemmInput::F16) {
    const ModelCopyRow& row = centred_or_plain(*reduced_copy_row(gemm_storage(p.input)), c.centre);
    prepare_copy(model_, row);
    c.input = &copy_of<ReducedCopy>(model_, row);
  }
  if (scan.copy_row) {
    c.scan_copy = &centred_or_plain(*scan.copy_row, c.centre);
    prepare_copy(model_, *c.scan_copy);
    if (c.scan_copy != scan.copy_row) c.scan_centre = c.centre;
  }
  return c;
}

// Host staging of one pass in the pinned buffer: queries and norms in, results and status out.
struct BatchSearcher::Staging {
  float* queries;
  float* norms;
  float* sims;
  int* rows;
  int* status;
};

// Why no query of this batch can be certified by the tiles (empty: they may answer): too many
// results to keep candidates for, a 16-bit copy that cannot hold the model's values, fp16 scores
// that can overflow where a row's norm nears fp16's largest value, or model norms outside the
// range guard.
std::optional<Refusal> BatchSearcher::batch_refusal(const BatchPipeline& p, const Copies& copies, int kk) const {
  const NormRange& range = model_.norm_range();
  if (kk > BatchPolicy::kMaxK) return Refusal{"k is above the batch selection's largest"};
  if (copies.input && copies.input->out_of_range) return Refusal{"the model's values do not fit its 16-bit copy"};
  if (auto no = batch_scan_refusal(*p.scan_row, model_.dim, BatchPolicy::candidates(kk), device_status().props.major))
    return no;
  if (p.scores == Storage::F16 && !(range.max_norm <= 60000.0f)) return Refusal{"fp16 scores could overflow"};
  if (!reduced_in_range(1.0f, range)) return Refusal{"the model's norms leave fp32's normal range"};
  return std::nullopt;
}

// The device scratch of a pass of n queries, kept while the next pass fits in it.
void BatchSearcher::ensure_pass(const BatchPipeline& p, int n, int kk, int tile) {
  const BatchScanRow& scan = *p.scan_row;
  auto& passes = buf_->passes;
  auto kind = std::find_if(passes.begin(), passes.end(), [&](const auto& q) {
    return q->input == p.input && q->scores_type == p.scores && q->scan == &scan;
  });
  if (kind == passes.end()) {
    passes.push_back(std::make_unique<Buffers::Pass>());
    kind = passes.end() - 1;
  }
  buf_->pass = kind->get();
  auto& w = *buf_->pass;
  const int dim = model_.dim;
  const int K = BatchPolicy::candidates(kk), S = scan.slices(n, tile, dim, K);
  // A smaller pass can want more slices per query, or larger buffers of the scan's own, than the
  // allocation had room for.
  const std::size_t entries = static_cast<std::size_t>(n) * S * K;
  const std::vector<ScanBuffer> own =
      scan.scratch ? scan.scratch(scan_shape(p, n, kk, tile)) : std::vector<ScanBuffer>{};
  bool fits = w.input == p.input && w.scores_type == p.scores && w.scan == &scan && w.batch >= n && w.k == kk &&
              w.tile == tile && w.list_entries >= entries && w.scratch.size() == own.size();
  for (std::size_t i = 0; fits && i < own.size(); ++i) fits = w.scratch[i].bytes() >= own[i].bytes;
  if (fits) return;
  w = Buffers::Pass{};
  const std::size_t need = batch_workspace_bytes(p.input, p.scores, n, dim, model_.ld, kk, tile, &scan, model_.rows);
  if (opt_.scratch_limit && need > opt_.scratch_limit)
    throw OutOfMemory("GPU out of memory: a batch of " + std::to_string(n) + " needs " + std::to_string(need >> 20) +
                      " MiB of scratch, the limit is " + std::to_string(opt_.scratch_limit >> 20) + " MiB");
  const bool f32 = gemm_storage(p.input) == Storage::F32;
  const int ldg = f32 ? model_.ld : reduced_leading_dim(dim);
  const std::size_t N = static_cast<std::size_t>(n);
  w.queries = DeviceBuffer(N * dim * sizeof(float), "batch queries");
  w.norms = DeviceBuffer(N * sizeof(float), "batch query norms");
  w.queries_g = DeviceBuffer(N * ldg * (f32 ? 4 : 2), "normalised queries");
  w.list_entries = N * S * K;
  w.lists_s = DeviceBuffer(w.list_entries * sizeof(float), "candidate lists");
  w.lists_r = DeviceBuffer(w.list_entries * sizeof(int), "candidate lists");
  w.shifts = DeviceBuffer(N * sizeof(float), "the queries' centring shifts");
  for (const ScanBuffer& b : own) {
    w.scratch.push_back(DeviceBuffer(std::max<std::size_t>(b.bytes, 16), b.what));
    w.scratch_ptrs.push_back(w.scratch.back().get());
  }
  w.out_s = DeviceBuffer(N * kk * sizeof(float), "batch results");
  w.out_r = DeviceBuffer(N * kk * sizeof(int), "batch results");
  w.status = DeviceBuffer(N * sizeof(int), "batch status");
  if (opt_.trace) {
    w.trace = DeviceBuffer(N * 4 * sizeof(float), "certificate trace");
    w.trace_counts = DeviceBuffer(N * sizeof(unsigned), "candidate counts trace");
  }
  w.input = p.input;
  w.scores_type = p.scores;
  w.scan = &scan;
  w.batch = n;
  w.k = kk;
  w.tile = tile;
}

// Queries [first, first + n) and their norms copied into the pinned buffer (grown when needed).
BatchSearcher::Staging BatchSearcher::stage_pass(const float* queries, const float* norms, int first, int n, int kk) {
  const auto t0 = clock_type::now();
  const int dim = model_.dim;
  const std::size_t in_floats = static_cast<std::size_t>(n) * (dim + 1);
  const std::size_t out_bytes = static_cast<std::size_t>(n) * (kk * 8 + 4);
  PinnedBuffer& pinned = buf_->pinned;
  if (pinned.bytes() < in_floats * 4 + out_bytes) {
    pinned = PinnedBuffer();  // the old one goes first
    pinned = PinnedBuffer(in_floats * 4 + out_bytes, "batch staging");
  }
  Staging h;
  h.queries = pinned.as<float>();
  h.norms = h.queries + static_cast<std::size_t>(n) * dim;
  std::memcpy(h.queries, queries + static_cast<std::size_t>(first) * dim, static_cast<std::size_t>(n) * dim * 4);
  std::memcpy(h.norms, norms + first, static_cast<std::size_t>(n) * 4);
  h.sims = h.queries + in_floats;
  h.rows = reinterpret_cast<int*>(h.sims + static_cast<std::size_t>(n) * kk);
  h.status = h.rows + static_cast<std::size_t>(n) * kk;
  host_.staging_ms += ms_since(t0);
  return h;
}

// The scan's arguments for a pass: the model copy the GEMM reads, the exact fp32 model for the
// re-rank, and this pass's scratch.
BatchScanArgs BatchSearcher::scan_args(const BatchPipeline& p, const Copies& copies, int first, int n, int kk, int tile,
                                       float bound) const {
  const ReducedCopy* red = copies.input;
  const auto& w = *buf_->pass;
  const int dim = model_.dim;
  const BatchScanRow& scan = *p.scan_row;
  BatchScanArgs a;
  a.input = p.input;
  a.scan = &scan;
  a.model = red ? red->data.get() : model_.vectors.get();
  a.ldg = red ? reduced_leading_dim(dim) : model_.ld;
  a.exact = DotArgs{model_.d_vectors(),
                    model_.d_norms(),
                    static_cast<int>(model_.rows),
                    dim,
                    model_.ld,
                    nullptr,
                    0.0f,
                    nullptr,
                    nullptr};
  a.inv_norms = buf_->inv_norms.as<float>();
  a.queries = dev_queries_ ? dev_queries_ + static_cast<std::size_t>(first) * dim : w.queries.as<float>();
  a.query_norms = dev_norms_ ? dev_norms_ + first : w.norms.as<float>();
  a.queries_g = w.queries_g.get();
  a.batch = n;
  a.k = kk;
  a.K = BatchPolicy::candidates(kk);
  a.tile_rows = tile;
  a.slices = scan.slices(n, tile, dim, a.K);
  a.lists_s = w.lists_s.as<float>();
  a.lists_r = w.lists_r.as<int>();
  a.error_bound = bound;
  if (scan.bind) scan.bind(scan_shape(p, n, kk, tile), w.scratch_ptrs.data(), a);
  if (copies.centre) {
    a.centring.mean = copies.centre->mean.as<float>();
    a.centring.shifts = w.shifts.as<float>();
  }
  if (scan.attach_copy && copies.scan_copy) scan.attach_copy(model_, *copies.scan_copy, copies.scan_centre, a);
  a.out_s = w.out_s.as<float>();
  a.out_r = w.out_r.as<int>();
  a.status = w.status.as<int>();
  a.gemm_only = opt_.gemm_only;
  a.widen = opt_.wide_rerank;
  if (opt_.trace) {
    a.trace = w.trace.as<float>();
    a.trace_counts = w.trace_counts.as<unsigned>();
  }
  return a;
}

// One pass on the device: upload, prepare, GEMM tiles with their selection, re-rank, download;
// each step between two events (its Breakdown stages), then a wait for the results.
void BatchSearcher::run_pass(const BatchScanArgs& a, const Staging& h, Breakdown* bd) {
  Buffers& b = *buf_;
  const std::size_t n = static_cast<std::size_t>(a.batch), kk = static_cast<std::size_t>(a.k);
  Event* m = b.marks;
  m[0].record(stream_);
  if (!dev_queries_) {
    CUDA_CHECK(cudaMemcpyAsync(b.pass->queries.get(), h.queries, n * model_.dim * 4, cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(cudaMemcpyAsync(b.pass->norms.get(), h.norms, n * 4, cudaMemcpyHostToDevice, stream_));
  }
  m[1].record(stream_);
  batch_prepare(a, stream_);
  CUDA_CHECK(cudaMemsetAsync(a.status, 0, n * sizeof(int), stream_));
  if (a.trace_counts) CUDA_CHECK(cudaMemsetAsync(a.trace_counts, 0xff, n * sizeof(unsigned), stream_));
  m[2].record(stream_);
  const TileEvents ev{{b.tile_events[0].get(), b.tile_events[1].get()},
                      {b.tile_events[2].get(), b.tile_events[3].get()}};
  batch_score_tiles(b.cublas.get(), a, stream_, side_, ev);
  m[3].record(stream_);
  if (!a.gemm_only) {
    if (a.scan->rerank)
      a.scan->rerank(a, stream_);
    else
      batch_rerank(a, stream_);
  }
  m[4].record(stream_);
  if (!a.gemm_only) {
    CUDA_CHECK(cudaMemcpyAsync(h.sims, a.out_s, n * kk * 4, cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaMemcpyAsync(h.rows, a.out_r, n * kk * 4, cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaMemcpyAsync(h.status, a.status, n * 4, cudaMemcpyDeviceToHost, stream_));
  }
  m[5].record(stream_);
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  if (a.trace && !a.gemm_only) keep_trace(a, h);
  if (!bd) return;
  Breakdown pass;
  pass.stages = {{"query_h2d", true, elapsed_ms(m[0], m[1])},
                 {"prepare", false, elapsed_ms(m[1], m[2])},
                 {"scan", false, elapsed_ms(m[2], m[3])},
                 {"rerank", false, elapsed_ms(m[3], m[4])},
                 {"result_d2h", true, elapsed_ms(m[4], m[5])}};
  pass.total_ms = elapsed_ms(m[0], m[5]);
  add_stages(*bd, pass);
}

// A pass's answers from its staging into out[first ...], the uncertified (and refused) queries
// noted for the fallback.
void BatchSearcher::take_answers(const Staging& h, int first, int n, int kk, const std::vector<char>& refused,
                                 std::vector<std::vector<Hit>>& out, std::vector<int>& uncertified) {
  const auto t0 = clock_type::now();
  for (int i = 0; i < n; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * kk;
    out[first + i] = hits_from(h.sims + at, h.rows + at, kk, model_.rows);
    if (h.status[i] > 0 || refused[first + i]) uncertified.push_back(first + i);
    widened_ += h.status[i] < 0 && !refused[first + i];  // certified by the wide re-rank
  }
  host_.answers_ms += ms_since(t0);
}

void BatchSearcher::keep_trace(const BatchScanArgs& a, const Staging& h) {
  const std::size_t n = static_cast<std::size_t>(a.batch);
  std::vector<float> ops(4 * n);
  std::vector<unsigned> counts(n);
  CUDA_CHECK(cudaMemcpy(ops.data(), a.trace, ops.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(counts.data(), a.trace_counts, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < n; ++i)
    trace_.push_back({ops[4 * i], ops[4 * i + 1], ops[4 * i + 2], ops[4 * i + 3] != 0.0f,
                      counts[i] == ~0u ? -1ll : static_cast<long long>(counts[i]), h.status[i]});
}

std::vector<std::vector<Hit>> BatchSearcher::run_tiles(const BatchPipeline& p, const float* queries, const float* norms,
                                                       int batch, int k, Breakdown* bd) {
  const auto t_setup = clock_type::now();
  std::vector<std::vector<Hit>> out(static_cast<std::size_t>(batch));
  if (batch == 0) return out;
  const std::int64_t rows = model_.rows;
  if (rows > INT32_MAX) throw Error("batched search supports at most 2^31 - 1 rows");
  const int kk = static_cast<int>(std::min<std::int64_t>(k, std::max<std::int64_t>(rows, 1)));
  // 4 bytes a row, ~3 us at 2.2M rows: per search, so a view whose rows changed is never scored
  // with the last rows' norms (the stream's chunk slots are such views).
  launch_inverse_norms(model_.d_norms(), rows, buf_->inv_norms.as<float>(), stream_);
  const Copies copies = prepare_copies(p);
  if (batch_refusal(p, copies, kk)) {
    std::vector<int> all(static_cast<std::size_t>(batch));
    for (int i = 0; i < batch; ++i) all[i] = i;
    refused_ = kk > BatchPolicy::kMaxK ? 0 : batch;  // a k too large is not a refusal of the copy
    return run_fallback(p, queries, norms, all, k, bd);
  }

  const NormRange& range = model_.norm_range();
  const int tile = opt_.tile_rows > 0 ? round_up(opt_.tile_rows, 8) : BatchPolicy::tile_rows(batch);
  const bool centred = copies.centre != nullptr;
  const float rho = centred ? copies.centre->rho : 1.0f;
  const float bound = centred
                          ? with_centre_slack(gemm_error_bound(p.input, model_.dim, range.min_norm, p.scores, rho), rho)
                          : gemm_error_bound(p.input, model_.dim, range.min_norm, p.scores);
  // Queries outside the range guard run with the others (their scores may be Inf or NaN, which
  // the selection tolerates) and are then redone by the fallback, whatever their status.
  std::vector<int> uncertified;
  std::vector<char> refused(static_cast<std::size_t>(batch), 0);
  for (int i = 0; i < batch; ++i)
    if (!batch_query_in_range(norms[i], range)) {
      refused[i] = 1;
      ++refused_;
    }
  // Start from the sub-batch that fitted last time for this shape: finding it again costs a
  // failed allocation per halving, and freeing waits for the whole device.
  int chunk =
      fit_.pipeline == &p && fit_.k == kk && fit_.tile == tile && fit_.batch > 0 ? std::min(batch, fit_.batch) : batch;
  host_.setup_ms = ms_since(t_setup);
  for (int first = 0; first < batch;) {
    const int n = std::min(chunk, batch - first);
    try {
      ensure_pass(p, n, kk, tile);
      const Staging h = stage_pass(queries, norms, first, n, kk);
      run_pass(scan_args(p, copies, first, n, kk, tile, bound), h, bd);
      if (!opt_.gemm_only) take_answers(h, first, n, kk, refused, out, uncertified);
      first += n;
    } catch (const OutOfMemory& e) {
      // Whatever was queued before the failure finishes first; then try half as many queries.
      cudaStreamSynchronize(side_);
      cudaStreamSynchronize(stream_);
      cudaGetLastError();
      // Every kind's scratch goes back; where other kinds held some, the same size is tried again
      // before halving (a fallback's scratch must not shrink the batch's sub-batches).
      const bool others = buf_->passes.size() > 1;
      buf_->passes.clear();
      buf_->pass = nullptr;
      if (others) continue;
      if (n == 1) throw Error(std::string(e.what()) + " (even one query at a time does not fit)");
      chunk = ceil_div(n, 2);
    }
  }
  sub_batch_ = chunk;
  if (chunk < batch || (fit_.pipeline == &p && fit_.k == kk && fit_.tile == tile)) fit_ = {&p, kk, tile, chunk};
  if (!uncertified.empty()) {
    const int done = sub_batch_;
    auto redo = run_fallback(p, queries, norms, uncertified, k, bd);
    for (std::size_t i = 0; i < uncertified.size(); ++i) out[uncertified[i]] = std::move(redo[i]);
    sub_batch_ = done;
  }
  return out;
}

}  // namespace distancies
