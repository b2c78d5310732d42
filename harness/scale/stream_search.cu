#include "harness/scale/stream_search.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include "harness/scale/merge_hits.hpp"
#include "runtime/error.hpp"
#include "variants/embeddings/batch_scan.hpp"
#include "variants/embeddings/plan.hpp"
#include "variants/embeddings/policy.hpp"

namespace distancies {

namespace {
using clock_type = std::chrono::steady_clock;

// Left to the CUDA context, cuBLAS's workspace and allocator rounding when no limit is given.
constexpr std::size_t kMargin = std::size_t(512) << 20;

std::size_t reduced_row_bytes(Storage s, int dim) {
  if (s == Storage::F32) return 0;
  return static_cast<std::size_t>(storage_leading_dim(s, dim)) * storage_bytes(s) +
         (s == Storage::I8 ? sizeof(float) : 0);
}
}  // namespace

std::size_t stream_budget(std::size_t limit) {
  require_device();
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t usable = free_b > kMargin ? free_b - kMargin : 0;
  return limit ? std::min(limit, usable) : usable;
}

// One chunk slot: its device rows, the event that says its copy landed, the copy's timing
// events, and the searchers bound to a view of it (full chunks; the shorter last chunk).
struct StreamSearcher::Slot {
  DeviceBuffer vectors, norms;     // fp32 rows, or a host copy's codes; the rows' norms
  DeviceBuffer scale, correction;  // a host int8 copy's row scales and corrections
  Event copied{Event::Timing::Off};
  Event copy_begin, copy_end;
  DeviceModel view[2];  // [0] full chunk, [1] the last, shorter chunk
  std::unique_ptr<GpuSearcher> one[2];
  std::unique_ptr<BatchSearcher> many[2];
  int many_tile[2] = {0, 0};
};

StreamSearcher::StreamSearcher(const HostRows& rows, StreamOptions opt)
    : rows_(rows), opt_(opt), copy_(cudaStreamNonBlocking) {
  require_device();
  if (opt.buffers == 1) throw Error("streaming needs at least 2 chunk slots (one copied while one is scanned)");
  if (rows.first + rows.rows > INT32_MAX)
    throw Error("streamed search numbers rows with 32 bits: at most 2^31 - 1 rows (docs/scale.md)");
  // The device's address of the rows where they are page-locked and mapped: a host copy's re-rank
  // reads its candidates' fp32 rows there. Pageable rows have none (the fp32 rows are streamed).
  cudaPointerAttributes at{};
  if (rows.rows > 0) CUDA_CHECK(cudaPointerGetAttributes(&at, rows.vectors));
  if (at.type == cudaMemoryTypeHost && at.devicePointer) mapped_rows_ = static_cast<const float*>(at.devicePointer);
}

std::string StreamSearcher::host_copy_refusal(const Pipeline& p) const {
  if (p.storage == Storage::F32) return "an fp32 scan";
  if (!mapped_rows_) return "the rows are not page-locked and mapped, so the re-rank cannot read them in place";
  if (!host_copy_failed_.empty()) return host_copy_failed_;
  return {};
}

StreamSearcher::~StreamSearcher() {
  if (copy_.get()) cudaStreamSynchronize(copy_);
}

void StreamSearcher::prepare(std::size_t per_row_extra, bool batch, Storage copy) {
  if (!slots_.empty() && slots_for_batch_ == batch && slots_extra_ >= per_row_extra && slots_copy_ == copy) return;
  cudaStreamSynchronize(copy_);
  slots_.clear();
  const bool host = copy != Storage::F32;
  StreamRequest r;
  r.rows = rows_.rows;
  // A host copy's slot row: its codes, an int8 scale and correction (at most), the norm.
  r.row_bytes = host ? reduced_row_bytes(copy, rows_.dim) + (copy == Storage::I8 ? sizeof(float) : 0) + sizeof(float)
                     : rows_.row_bytes();
  r.budget = stream_budget(opt_.gpu_memory_limit);
  r.per_row_extra = per_row_extra;
  r.batch = batch;
  r.chunk_rows = opt_.chunk_rows;
  r.buffers = opt_.buffers;
  stats_.layout = plan_stream(r);
  const StreamLayout& l = stats_.layout;
  if (host && (!host_copy_ || host_copy_->storage != copy || host_copy_->chunk_rows != l.chunk_rows)) {
    host_copy_.reset();  // the old one's page-locked memory first
    host_copy_ = std::make_unique<HostCopy>(make_host_copy(rows_, copy, l.chunk_rows));
    stats_.host_copy_ms = host_copy_->making_ms;
  }
  const std::size_t rows = static_cast<std::size_t>(l.chunk_rows);
  for (int i = 0; i < l.buffers && i < l.chunks; ++i) {
    auto s = std::make_unique<Slot>();
    if (host) {
      s->vectors = DeviceBuffer(rows * host_copy_->code_bytes, "a streamed chunk of the reduced copy");
      if (host_copy_->scale.get()) s->scale = DeviceBuffer(rows * sizeof(float), "a streamed chunk's row scales");
      if (host_copy_->correction.get())
        s->correction = DeviceBuffer(rows * sizeof(float), "a streamed chunk's row corrections");
    } else {
      s->vectors = DeviceBuffer(rows * rows_.ld * sizeof(float), "a streamed chunk");
    }
    s->norms = DeviceBuffer(rows * sizeof(float), "a streamed chunk's norms");
    const std::int64_t tail = rows_.rows - (l.chunks - 1) * l.chunk_rows;
    // A host copy's views read their fp32 rows in host memory (bind_chunk points them there).
    const float* vectors = host ? mapped_rows_ : s->vectors.as<float>();
    for (int t = 0; t < 2; ++t)
      s->view[t] =
          DeviceModel::view(vectors, s->norms.as<float>(), t ? tail : l.chunk_rows, rows_.dim, rows_.ld, rows_.range);
    slots_.push_back(std::move(s));
  }
  slots_for_batch_ = batch;
  slots_extra_ = per_row_extra;
  slots_copy_ = copy;
}

void StreamSearcher::bind_chunk(Slot& s, bool tail, std::int64_t c) {
  DeviceModel& v = s.view[tail];
  if (slots_copy_ == Storage::F32) return v.rows_changed();
  const std::int64_t lo = c * stats_.layout.chunk_rows;
  v.vectors = DeviceBuffer::borrow(const_cast<float*>(mapped_rows_ + lo * rows_.ld), v.vector_bytes());
  bind_host_copy(*host_copy_, c, v, SlotCopy{s.vectors.get(), s.scale.as<float>(), s.correction.as<float>()});
}

// The copy feeder: a host thread that issues every chunk's copy piece by piece, never more than
// kPiecesInFlight pieces ahead of the engine. The host-to-device engine serves the streams'
// copies in the order they were issued, so a chunk search's own small uploads (its queries)
// wait behind at most that many pieces instead of a whole chunk.
struct StreamSearcher::Feeder {
  std::mutex mu;
  std::condition_variable cv;
  std::int64_t issued = 0;    // chunks whose copies are all issued (their `copied` recorded)
  std::int64_t released = 0;  // chunks whose slot is free to be filled
  bool stop = false;
  std::exception_ptr error;
  int device = 0;  // the searching thread's GPU (a rank's), made current in the feeder
};

// What a chunk's copy moves into its slot: the fp32 rows and norms, or a host copy's codes (int8:
// with the row scales and corrections) and the norms.
std::vector<StreamSearcher::ChunkPart> StreamSearcher::chunk_parts(Slot& s, std::int64_t lo, std::int64_t n) const {
  const auto rows = static_cast<std::size_t>(n), at = static_cast<std::size_t>(lo);
  std::vector<ChunkPart> parts;
  auto add = [&](DeviceBuffer& dst, const void* base, std::size_t row_bytes) {
    if (base) parts.push_back({static_cast<const char*>(base) + at * row_bytes, dst.as<char>(), rows * row_bytes});
  };
  if (slots_copy_ == Storage::F32) {
    add(s.vectors, rows_.vectors, rows_.ld * sizeof(float));
  } else {
    add(s.vectors, host_copy_->codes.get(), host_copy_->code_bytes);
    add(s.scale, host_copy_->scale.get(), sizeof(float));
    add(s.correction, host_copy_->correction.get(), sizeof(float));
  }
  add(s.norms, rows_.norms, sizeof(float));
  return parts;
}

void StreamSearcher::feed(Feeder& f) {
  using P = policy::Active::StreamChunks;
  const StreamLayout& l = stats_.layout;
  std::int64_t pieces = 0;
  try {
    CUDA_CHECK(cudaSetDevice(f.device));
    Event piece_done[P::kPiecesInFlight];
    for (std::int64_t c = 0; c < l.chunks; ++c) {
      {
        std::unique_lock<std::mutex> lk(f.mu);
        f.cv.wait(lk, [&] { return f.stop || c < f.released; });
        if (f.stop) return;
      }
      Slot& s = *slots_[static_cast<std::size_t>(c % l.buffers)];
      const std::int64_t lo = c * l.chunk_rows, n = std::min(l.chunk_rows, rows_.rows - lo);
      s.copy_begin.record(copy_);
      for (const ChunkPart& part : chunk_parts(s, lo, n)) {
        for (std::size_t off = 0; off < part.bytes; off += P::kCopyPieceBytes, ++pieces) {
          Event& e = piece_done[pieces % P::kPiecesInFlight];
          if (pieces >= P::kPiecesInFlight) CUDA_CHECK(cudaEventSynchronize(e.get()));
          CUDA_CHECK(cudaMemcpyAsync(part.dst + off, part.src + off, std::min(P::kCopyPieceBytes, part.bytes - off),
                                     cudaMemcpyHostToDevice, copy_));
          e.record(copy_);
        }
      }
      s.copy_end.record(copy_);
      s.copied.record(copy_);
      {
        std::lock_guard<std::mutex> lk(f.mu);
        f.issued = c + 1;
      }
      f.cv.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lk(f.mu);
    f.error = std::current_exception();
    f.stop = true;
    f.cv.notify_all();
  }
}

namespace {

// Runs `fn` when the scope ends, however it ends.
struct OnExit {
  std::function<void()> fn;
  ~OnExit() { fn(); }
};

// A chunk search's stages added into the run's, summed by name; returns their total.
float add_by_name(const std::vector<StageTime>& stages, std::vector<StageTime>& into) {
  float total = 0;
  for (const StageTime& st : stages) {
    total += st.ms;
    auto it = std::find_if(into.begin(), into.end(), [&](const StageTime& x) { return x.name == st.name; });
    if (it == into.end())
      into.push_back(st);
    else
      it->ms += st.ms;
  }
  return total;
}

// The chunk copies, the chunk searches' stages summed over chunks, and the host's share of the
// chunk searches (merging, bookkeeping). Copies and searches overlap: overhead_ms() < 0 says by how much.
void fill_stream_breakdown(Breakdown& bd, float copy_ms, const std::vector<StageTime>& inner, float host_ms,
                           float total_ms, double wall_ms) {
  bd.stages.push_back({"chunk_h2d", true, copy_ms});
  for (StageTime st : inner) {
    st.name = "chunk_" + st.name;
    bd.stages.push_back(st);
  }
  bd.stages.push_back({"chunk_host", false, host_ms});
  bd.total_ms = total_ms;
  bd.wall_ms = wall_ms;
}

}  // namespace

std::vector<std::vector<Hit>> StreamSearcher::run(int queries, int k, Breakdown* bd, void* ctx, ChunkSearch scan) {
  const auto wall0 = clock_type::now();
  if (bd) *bd = Breakdown{};
  const StreamLayout l = stats_.layout;
  const std::size_t moved = slots_copy_ == Storage::F32 ? rows_.ld * sizeof(float) : host_copy_->slot_row_bytes();
  stats_.bytes = static_cast<std::size_t>(rows_.rows) * (moved + sizeof(float));
  stats_.copy_ms = 0;
  stats_.fallbacks = 0;
  std::vector<std::vector<Hit>> acc(static_cast<std::size_t>(queries));
  if (l.chunks == 0) return acc;
  Event start, end;
  start.record(copy_);
  Feeder f;
  CUDA_CHECK(cudaGetDevice(&f.device));
  f.released = std::min<std::int64_t>(l.buffers, l.chunks);
  std::thread feeder([&] { feed(f); });
  const OnExit join{[&] {  // the feeder told to stop and joined before its state goes
    {
      std::lock_guard<std::mutex> lk(f.mu);
      f.stop = true;
    }
    f.cv.notify_all();
    feeder.join();
  }};
  float search_ms = 0, inner_ms = 0;
  std::vector<StageTime> inner_stages;  // the chunk searches' own stages, summed by name
  Breakdown inner;
  for (std::int64_t c = 0; c < l.chunks; ++c) {
    Slot& s = *slots_[static_cast<std::size_t>(c % l.buffers)];
    {
      std::unique_lock<std::mutex> lk(f.mu);
      f.cv.wait(lk, [&] { return f.issued > c || f.error; });
      if (f.error) std::rethrow_exception(f.error);
    }
    // The host waits for this chunk alone; the next ones keep the copy engine busy meanwhile.
    CUDA_CHECK(cudaEventSynchronize(s.copied.get()));
    const bool tail = c == l.chunks - 1 && rows_.rows - c * l.chunk_rows != l.chunk_rows;
    bind_chunk(s, tail, c);
    const auto t0 = clock_type::now();
    inner = Breakdown{};
    auto part = scan(ctx, s, tail, bd ? &inner : nullptr);
    search_ms += std::chrono::duration<float, std::milli>(clock_type::now() - t0).count();
    if (bd) inner_ms += add_by_name(inner.stages, inner_stages);
    for (int q = 0; q < queries; ++q) {
      offset_rows(part[q], rows_.first + c * l.chunk_rows);
      merge_top_k(acc[q], part[q], k);
    }
    stats_.copy_ms += elapsed_ms(s.copy_begin, s.copy_end);
    {
      std::lock_guard<std::mutex> lk(f.mu);
      f.released = std::min<std::int64_t>(l.chunks, c + 1 + l.buffers);  // this slot is free again
    }
    f.cv.notify_all();
  }
  end.record(copy_);
  stats_.total_ms = elapsed_ms(start, end);
  if (bd)
    fill_stream_breakdown(*bd, stats_.copy_ms, inner_stages, std::max(0.0f, search_ms - inner_ms), stats_.total_ms,
                          std::chrono::duration<double, std::milli>(clock_type::now() - wall0).count());
  return acc;
}

namespace {
struct OneQuery {
  const Pipeline* p;
  const float* query;
  float norm;
  int k;
  int* fallbacks;
};
struct Batch {
  const BatchPipeline* p;
  const float* queries;
  const float* norms;
  int batch, k;
  std::size_t scratch;
  std::int64_t chunk_rows;
  int* fallbacks;
  const float* device_queries;
  const float* device_norms;
};
}  // namespace

std::vector<Hit> StreamSearcher::search(const Pipeline& p, const float* query, float query_norm, int k, Breakdown* bd) {
  if (k <= 0) throw Error("k must be at least 1");
  if (p.habits.copy_model_every_query)
    throw Error(std::string("pipeline ") + p.name +
                " copies the whole model on every query, which streaming does chunk by chunk already: stream "
                "with a resident-model pipeline (fused, ...)");
  const std::int64_t probe = std::max<std::int64_t>(1, std::min<std::int64_t>(rows_.rows, 1 << 20));
  const Plan plan = make_plan(p, static_cast<int>(probe), rows_.dim, k);
  std::string no_host = opt_.reduced_from_host ? host_copy_refusal(p) : "not asked for";
  Storage copy = no_host.empty() ? p.storage : Storage::F32;
  // The searchers' bytes a row: the workspace, and the reduced copy where a chunk makes its own.
  const auto extra = [&](Storage c) {
    return plan.workspace_bytes / static_cast<std::size_t>(probe) + 1 +
           (c == Storage::F32 ? reduced_row_bytes(p.storage, rows_.dim) : 0);
  };
  try {
    prepare(extra(copy), false, copy);
  } catch (const OutOfMemory& e) {
    if (copy == Storage::F32) throw;
    // The copy does not fit (page-locked host memory, or the GPU while making it): the fp32 rows
    // are streamed instead, and the copy is not tried again by this searcher.
    host_copy_.reset();
    host_copy_failed_ = std::string("the reduced copy did not fit: ") + e.what();
    no_host = host_copy_failed_;
    copy = Storage::F32;
    prepare(extra(copy), false, copy);
  }
  stats_.streamed = copy == Storage::F32 ? std::string("fp32 rows") +
                                               (p.storage == Storage::F32 ? "" : " (copy per chunk: " + no_host + ")")
                                         : std::string(storage_name(copy)) + " copy from host memory";
  stats_.centred_chunks = 0;
  if (copy != Storage::F32)
    for (const HostCopy::Chunk& ch : host_copy_->chunks)
      stats_.centred_chunks += ch.row != reduced_copy_row(copy) ? 1 : 0;
  int fallbacks = 0;
  OneQuery ctx{&p, query, query_norm, k, &fallbacks};
  auto out = run(1, k, bd, &ctx, [](void* c, Slot& s, bool tail, Breakdown* inner) {
    auto& a = *static_cast<OneQuery*>(c);
    if (!s.one[tail]) s.one[tail] = std::make_unique<GpuSearcher>(s.view[tail], nullptr);
    const GpuSearcher::CertificateCounts before = s.one[tail]->certificate_counts();
    std::vector<std::vector<Hit>> hits{s.one[tail]->search(*a.p, a.query, a.norm, a.k, inner)};
    const GpuSearcher::CertificateCounts& after = s.one[tail]->certificate_counts();
    *a.fallbacks += static_cast<int>(after.uncertified - before.uncertified + after.refused - before.refused);
    return hits;
  });
  stats_.fallbacks = fallbacks;
  return std::move(out.front());
}

std::vector<Hit> StreamSearcher::search(const Pipeline& p, const Query& q, int k, bool keep_query_words,
                                        Breakdown* bd) {
  if (k <= 0) throw Error("k must be at least 1");
  return finish_query(search(p, q.vector.data(), q.norm, request_k(q, k, keep_query_words, rows_.rows), bd), q, k,
                      keep_query_words);
}

std::vector<std::vector<Hit>> StreamSearcher::search(const BatchPipeline& p, const float* queries, const float* norms,
                                                     int batch, int k, Breakdown* bd) {
  if (k <= 0) throw Error("k must be at least 1");
  if (batch <= 0) return {};
  const Storage copy = gemm_storage(p.input);
  prepare(reduced_row_bytes(copy, rows_.dim), true);
  stats_.streamed = "fp32 rows";
  // The searchers' share of the budget less the chunk views' reduced copies (two views).
  const std::size_t reduced =
      2 * static_cast<std::size_t>(stats_.layout.chunk_rows) * reduced_row_bytes(copy, rows_.dim);
  const std::size_t scratch = stats_.layout.searcher_bytes > reduced ? stats_.layout.searcher_bytes - reduced : 1;
  int fallbacks = 0;
  // The batch goes up once, before any chunk: per chunk its upload would wait behind the next
  // chunk's copy on the host-to-device engine (measured: most of a chunk's copy time each).
  const std::size_t qbytes = static_cast<std::size_t>(batch) * rows_.dim * sizeof(float);
  if (batch_queries_.bytes() < qbytes) batch_queries_ = DeviceBuffer(qbytes, "a streamed batch's queries");
  if (batch_norms_.bytes() < batch * sizeof(float)) batch_norms_ = DeviceBuffer(batch * sizeof(float), "their norms");
  CUDA_CHECK(cudaMemcpyAsync(batch_queries_.get(), queries, qbytes, cudaMemcpyHostToDevice, copy_));
  CUDA_CHECK(cudaMemcpyAsync(batch_norms_.get(), norms, batch * sizeof(float), cudaMemcpyHostToDevice, copy_));
  CUDA_CHECK(cudaStreamSynchronize(copy_));
  Batch ctx{&p,
            queries,
            norms,
            batch,
            k,
            scratch,
            stats_.layout.chunk_rows,
            &fallbacks,
            batch_queries_.as<float>(),
            batch_norms_.as<float>()};
  auto out = run(batch, k, bd, &ctx, [](void* c, Slot& s, bool tail, Breakdown* inner) {
    auto& a = *static_cast<Batch*>(c);
    // Tiles no longer than a chunk: score buffers sized for rows that exist.
    const int tile =
        static_cast<int>(std::min<std::int64_t>(BatchPolicy::tile_rows(a.batch), round_up(a.chunk_rows, 128)));
    if (!s.many[tail] || s.many_tile[tail] != tile) {
      BatchSearcher::Options o;
      o.tile_rows = tile;
      o.scratch_limit = a.scratch;
      s.many[tail] = std::make_unique<BatchSearcher>(s.view[tail], o);
      s.many_tile[tail] = tile;
    }
    s.many[tail]->set_device_queries(a.device_queries, a.device_norms);
    auto r = s.many[tail]->search(*a.p, a.queries, a.norms, a.batch, a.k, inner);
    *a.fallbacks += s.many[tail]->last_fallbacks();
    return r;
  });
  stats_.fallbacks = fallbacks;
  return out;
}

std::vector<std::vector<Hit>> StreamSearcher::search(const BatchPipeline& p, const std::vector<Query>& qs, int k,
                                                     bool keep_query_words, Breakdown* bd) {
  const PackedQueries q = pack_queries(qs, rows_.dim, k, keep_query_words, rows_.rows);
  auto out = search(p, q.vectors.data(), q.norms.data(), q.batch(), q.k, bd);
  finish_queries(out, qs, k, keep_query_words);
  return out;
}

}  // namespace distancies
