#include "harness/scale/shard_search.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "harness/scale/merge_hits.hpp"
#include "runtime/error.hpp"
#include "runtime/launch.hpp"

namespace distancies {

namespace {
using clock_type = std::chrono::steady_clock;

// The fault tests' hook: DISTANCIES_TEST_DIE_RANK=R makes rank R exit before its first exchange,
// as a rank that crashes mid-batch would (docs/scale.md, "Faults").
void die_if_asked(int rank) {
  const char* r = std::getenv("DISTANCIES_TEST_DIE_RANK");
  if (r && *r && std::atoi(r) == rank) {
    std::fprintf(stderr, "distancies: rank %d exits now, as DISTANCIES_TEST_DIE_RANK asks\n", rank);
    std::_Exit(3);
  }
}
}  // namespace

DeviceModel upload_rows(const HostRows& r) {
  DeviceModel dm;
  dm.rows = r.rows;
  dm.dim = r.dim;
  dm.ld = r.ld;
  dm.vectors = DeviceBuffer(std::max<std::size_t>(r.vector_bytes(), 16), "this rank's shard");
  dm.norms = DeviceBuffer(static_cast<std::size_t>(std::max<std::int64_t>(r.rows, 1)) * sizeof(float),
                          "this rank's shard norms");
  if (r.rows > 0) {
    CUDA_CHECK(cudaMemcpy(dm.vectors.get(), r.vectors, r.vector_bytes(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dm.norms.get(), r.norms, r.rows * sizeof(float), cudaMemcpyHostToDevice));
  }
  dm.measure_norm_range();
  return dm;
}

std::pair<std::int64_t, std::int64_t> shard_rows(std::int64_t rows, int rank, int size) {
  const std::int64_t base = rows / size, extra = rows % size;
  const std::int64_t first = rank * base + std::min<std::int64_t>(rank, extra);
  return {first, first + base + (rank < extra ? 1 : 0)};
}

namespace {
// Each query's best k of the gathered lists at `lists` (device) into `out` (device, queries x k).
void launch_merge(const ShardHit* lists, int ranks, int queries, int k, ShardHit* out, cudaStream_t s) {
  const long long entries = static_cast<long long>(ranks) * queries * k;
  CUDA_CHECK(cudaMemsetAsync(out, 0xff, static_cast<std::size_t>(queries) * k * sizeof(ShardHit), s));  // row -1
  if (entries == 0) return;
  constexpr int kThreads = 256;
  merge_lists_kernel<<<static_cast<unsigned>((entries + kThreads - 1) / kThreads), kThreads, 0, s>>>(lists, ranks,
                                                                                                     queries, k, out);
  CUDA_CHECK_LAUNCH();
}

// One list of k (padding dropped) into `into`, whose storage is kept: a batch's merged lists are
// written over its local ones instead of allocating a list a query again.
void fill_hits(const ShardHit* h, int k, std::vector<Hit>& into) {
  into.clear();
  into.reserve(static_cast<std::size_t>(k));
  for (int i = 0; i < k && h[i].row >= 0; ++i) into.push_back({h[i].row, h[i].sim});
}

// The merged lists (queries x k), padding dropped.
std::vector<std::vector<Hit>> hits_of(const ShardHit* merged, int queries, int k) {
  std::vector<std::vector<Hit>> out(static_cast<std::size_t>(queries));
  for (int q = 0; q < queries; ++q) fill_hits(merged + static_cast<std::size_t>(q) * k, k, out[q]);
  return out;
}

// The host's merge of the gathered lists at `gathered` (ranks x queries x k): rank 0's lists as
// they are, every other rank's merged in.
std::vector<std::vector<Hit>> merge_on_host(const ShardHit* gathered, int ranks, int queries, int k) {
  std::vector<std::vector<Hit>> out = hits_of(gathered, queries, k);
  std::vector<Hit> part;
  for (int r = 1; r < ranks; ++r)
    for (int q = 0; q < queries; ++q) {
      part.clear();
      const ShardHit* h = gathered + (static_cast<std::size_t>(r) * queries + q) * k;
      for (int i = 0; i < k && h[i].row >= 0; ++i) part.push_back({h[i].row, h[i].sim});
      merge_top_k(out[q], part, k);
    }
  return out;
}

void check_gathered(const std::vector<ShardHit>& gathered, int ranks, int queries, int k) {
  if (gathered.size() != static_cast<std::size_t>(ranks) * queries * k)
    throw Error("merge_gathered: the gathered lists have the wrong size");
}
}  // namespace

std::vector<std::vector<Hit>> merge_gathered_on_device(const std::vector<ShardHit>& gathered, int ranks, int queries,
                                                       int k) {
  check_gathered(gathered, ranks, queries, k);
  DeviceBuffer in(std::max<std::size_t>(gathered.size() * sizeof(ShardHit), 16), "gathered lists");
  DeviceBuffer out(std::max<std::size_t>(static_cast<std::size_t>(queries) * k * sizeof(ShardHit), 16), "merged lists");
  std::vector<ShardHit> merged(static_cast<std::size_t>(queries) * k);
  CUDA_CHECK(cudaMemcpy(in.get(), gathered.data(), gathered.size() * sizeof(ShardHit), cudaMemcpyHostToDevice));
  launch_merge(in.as<ShardHit>(), ranks, queries, k, out.as<ShardHit>(), nullptr);
  CUDA_CHECK(cudaMemcpy(merged.data(), out.get(), merged.size() * sizeof(ShardHit), cudaMemcpyDeviceToHost));
  return hits_of(merged.data(), queries, k);
}

std::vector<std::vector<Hit>> merge_gathered(const std::vector<ShardHit>& gathered, int ranks, int queries, int k) {
  check_gathered(gathered, ranks, queries, k);
  return merge_on_host(gathered.data(), ranks, queries, k);
}

namespace {
// Rank r's block of `per` answers holds queries shard_rows(batch, r, ranks), in order; those of
// rank `own` (>= 0) are taken from `mine` as they are.
std::vector<std::vector<Hit>> concatenate_on_host(const ShardHit* gathered, int ranks, int per, int batch, int k,
                                                  int own = -1, std::vector<std::vector<Hit>>* mine = nullptr) {
  std::vector<std::vector<Hit>> out(static_cast<std::size_t>(std::max(batch, 0)));
  for (int r = 0; r < ranks; ++r) {
    const auto [lo, hi] = shard_rows(batch, r, ranks);
    if (hi - lo > per) throw Error("concatenate_gathered: a rank answered more queries than its block holds");
    for (std::int64_t i = 0; i < hi - lo; ++i)
      if (r == own && mine && static_cast<std::size_t>(i) < mine->size())
        out[lo + i] = std::move((*mine)[i]);
      else
        fill_hits(gathered + (static_cast<std::size_t>(r) * per + i) * k, k, out[lo + i]);
  }
  return out;
}
}  // namespace

std::vector<std::vector<Hit>> concatenate_gathered(const std::vector<ShardHit>& gathered, int ranks, int per, int batch,
                                                   int k) {
  check_gathered(gathered, ranks, per, k);
  return concatenate_on_host(gathered.data(), ranks, per, batch, k);
}

Split split_for(Split asked, bool replicated, int batch) {
  if (!replicated) return Split::Rows;
  if (asked != Split::Auto) return asked;
  return batch >= kSplitQueriesFrom ? Split::Queries : Split::Rows;
}

const char* split_name(Split s) {
  switch (s) {
    case Split::Rows:
      return "rows";
    case Split::Queries:
      return "queries";
    default:
      return "auto";
  }
}

ShardSearcher::ShardSearcher(NcclComm& comm, const HostRows& all, ShardOptions o)
    : comm_(comm), total_(all.rows), stream_s_(cudaStreamNonBlocking) {
  if (all.rows > INT32_MAX) throw Error("sharded search numbers rows with 32 bits: at most 2^31 - 1 rows");
  if (o.replicate) {  // replicate() sets this rank's rows
    if (o.stream) throw Error("a replica holds every row resident on its GPU: it cannot be streamed");
    stage_ahead();
    replicate(upload_rows(all));
    return;
  }
  const auto [lo, hi] = distancies::shard_rows(all.rows, comm.rank(), comm.size());
  first_ = lo;
  rows_ = hi - lo;
  hold(all.slice(lo, hi), o);
}

ShardSearcher::ShardSearcher(NcclComm& comm, const HostRows& mine, std::int64_t first_row, std::int64_t total_rows,
                             ShardOptions o)
    : comm_(comm), first_(first_row), rows_(mine.rows), total_(total_rows), stream_s_(cudaStreamNonBlocking) {
  if (total_rows > INT32_MAX) throw Error("sharded search numbers rows with 32 bits: at most 2^31 - 1 rows");
  if (first_row < 0 || first_row + mine.rows > total_rows) throw Error("a shard's rows lie outside its model");
  if (o.replicate) throw Error("a rank given only its rows cannot be a replica (it needs every row)");
  hold(mine, o);
}

// Resident where the rows fit this GPU (and streaming was not asked for), else streamed.
void ShardSearcher::hold(const HostRows& mine, ShardOptions o) {
  stage_ahead();
  bool stream = o.stream;
  if (!stream) {
    try {
      resident_ = std::make_unique<DeviceModel>(upload_rows(mine));
    } catch (const OutOfMemory&) {
      stream = true;  // the shard does not fit this GPU: stream it
    }
  }
  if (stream) stream_ = std::make_unique<StreamSearcher>(mine, o.stream_options);
}

ShardSearcher::ShardSearcher(NcclComm& comm, DeviceModel shard, std::int64_t first_row, std::int64_t total_rows)
    : comm_(comm), first_(first_row), rows_(shard.rows), total_(total_rows), stream_s_(cudaStreamNonBlocking) {
  stage_ahead();
  resident_ = std::make_unique<DeviceModel>(std::move(shard));
}

ShardSearcher::ShardSearcher(NcclComm& comm, DeviceModel whole)
    : comm_(comm), total_(whole.rows), stream_s_(cudaStreamNonBlocking) {
  if (whole.rows > INT32_MAX) throw Error("sharded search numbers rows with 32 bits: at most 2^31 - 1 rows");
  stage_ahead();
  replicate(std::move(whole));
}

// Every row kept; the rows split searches this rank's rows through a view of them (the whole
// model's norm range, so its error bounds are the whole model's).
void ShardSearcher::replicate(DeviceModel whole) {
  whole_ = std::make_unique<DeviceModel>(std::move(whole));
  const auto [lo, hi] = distancies::shard_rows(whole_->rows, comm_.rank(), comm_.size());
  first_ = lo;
  rows_ = hi - lo;
  resident_ =
      std::make_unique<DeviceModel>(DeviceModel::view(whole_->d_vectors() + lo * whole_->ld, whole_->d_norms() + lo,
                                                      rows_, whole_->dim, whole_->ld, whole_->norm_range()));
}

// Page-locking memory takes milliseconds: the staging of a few hundred queries' lists is made
// with the searcher, not in the first query's exchange.
void ShardSearcher::stage_ahead() { staged_ = PinnedBuffer(std::size_t(64) << 10, "the exchange's lists"); }

ShardSearcher::~ShardSearcher() = default;

ShardHit* ShardSearcher::gather(const std::vector<std::vector<Hit>>& local, int per, int k, std::size_t back) {
  const std::size_t per_rank = static_cast<std::size_t>(per) * k;
  const std::size_t bytes = per_rank * sizeof(ShardHit);
  if (send_.bytes() < bytes) send_ = DeviceBuffer(bytes, "the shard's candidate lists");
  if (recv_.bytes() < bytes * comm_.size()) recv_ = DeviceBuffer(bytes * comm_.size(), "every shard's candidate lists");
  // Page-locked and kept: the lists go up and come back without a staging copy or fresh pages.
  if (staged_.bytes() < (per_rank + back) * sizeof(ShardHit)) {
    staged_ = PinnedBuffer();
    staged_ = PinnedBuffer((per_rank + back) * sizeof(ShardHit), "the exchange's lists");
  }
  ShardHit* const up = staged_.as<ShardHit>();
  std::fill(up, up + per_rank, ShardHit{0.0f, -1});
  for (std::size_t q = 0; q < local.size() && q < static_cast<std::size_t>(per); ++q)
    for (std::size_t i = 0; i < local[q].size() && i < static_cast<std::size_t>(k); ++i)
      up[q * static_cast<std::size_t>(k) + i] = {local[q][i].sim, local[q][i].row};
  CUDA_CHECK(cudaMemcpyAsync(send_.get(), up, bytes, cudaMemcpyHostToDevice, stream_s_));
  die_if_asked(comm_.rank());
  comm_.all_gather(send_.get(), recv_.get(), bytes, stream_s_);
  // Before the copy back and the wait on the stream: neither would end when a rank has died;
  // the watched wait ends this rank with an error line.
  comm_.wait(stream_s_);
  return up + per_rank;
}

namespace {
void time_exchange(Breakdown* bd, clock_type::time_point t0) {
  if (!bd) return;
  const float ms = std::chrono::duration<float, std::milli>(clock_type::now() - t0).count();
  bd->stages.push_back({"shard_exchange", true, ms});
  bd->total_ms += ms;
}
}  // namespace

std::vector<std::vector<Hit>> ShardSearcher::exchange(std::vector<std::vector<Hit>> local, int k, Breakdown* bd) {
  const auto t0 = clock_type::now();
  const int queries = static_cast<int>(local.size());
  const std::size_t per_rank = static_cast<std::size_t>(queries) * k;
  const std::size_t bytes = per_rank * sizeof(ShardHit);
  // The GPU merges where the host would merge many lists; a few it merges faster itself than two
  // launches (docs/scale.md, "The merge on the device").
  const bool on_device = comm_.size() > 1 && per_rank * comm_.size() >= kDeviceMergeFrom;
  if (on_device && merged_.bytes() < bytes) merged_ = DeviceBuffer(bytes, "the merged candidate lists");
  const std::size_t down = on_device ? per_rank : per_rank * comm_.size();
  ShardHit* const back = gather(local, queries, k, down);
  if (on_device)  // merged where the lists arrived: only the k best a query come back
    launch_merge(recv_.as<ShardHit>(), comm_.size(), queries, k, merged_.as<ShardHit>(), stream_s_);
  CUDA_CHECK(cudaMemcpyAsync(back, on_device ? merged_.get() : recv_.get(), down * sizeof(ShardHit),
                             cudaMemcpyDeviceToHost, stream_s_));
  CUDA_CHECK(cudaStreamSynchronize(stream_s_));
  if (on_device)
    for (int q = 0; q < queries; ++q) fill_hits(back + static_cast<std::size_t>(q) * k, k, local[q]);
  else
    local = merge_on_host(back, comm_.size(), queries, k);
  time_exchange(bd, t0);
  return local;
}

std::vector<std::vector<Hit>> ShardSearcher::exchange_answers(std::vector<std::vector<Hit>> local, int batch, int k,
                                                              Breakdown* bd) {
  const auto t0 = clock_type::now();
  const int per = static_cast<int>(ceil_div(static_cast<long long>(batch), static_cast<long long>(comm_.size())));
  const std::size_t all = static_cast<std::size_t>(per) * k * comm_.size();
  ShardHit* const back = gather(local, per, k, all);
  CUDA_CHECK(cudaMemcpyAsync(back, recv_.get(), all * sizeof(ShardHit), cudaMemcpyDeviceToHost, stream_s_));
  CUDA_CHECK(cudaStreamSynchronize(stream_s_));
  auto out = concatenate_on_host(back, comm_.size(), per, batch, k, comm_.rank(), &local);
  time_exchange(bd, t0);
  return out;
}

std::vector<Hit> ShardSearcher::search(const Pipeline& p, const float* query, float query_norm, int k, Breakdown* bd) {
  if (k <= 0) throw Error("k must be at least 1");
  const auto t0 = clock_type::now();
  std::vector<std::vector<Hit>> local(1);
  if (rows_ > 0) {
    if (stream_)
      local[0] = stream_->search(p, query, query_norm, k, bd);
    else {
      if (!one_) one_ = std::make_unique<GpuSearcher>(*resident_, nullptr);
      local[0] = one_->search(p, query, query_norm, k, bd);
    }
    offset_rows(local[0], first_);
  }
  auto out = exchange(std::move(local), k, bd);
  if (bd) bd->wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  return std::move(out.front());
}

std::vector<Hit> ShardSearcher::search(const Pipeline& p, const Query& q, int k, bool keep_query_words, Breakdown* bd) {
  if (k <= 0) throw Error("k must be at least 1");
  return finish_query(search(p, q.vector.data(), q.norm, request_k(q, k, keep_query_words, total_), bd), q, k,
                      keep_query_words);
}

std::vector<std::vector<Hit>> ShardSearcher::search(const BatchPipeline& p, const float* queries, const float* norms,
                                                    int batch, int k, Breakdown* bd) {
  if (k <= 0) throw Error("k must be at least 1");
  const auto t0 = clock_type::now();
  fallbacks_ = 0;
  last_split_ = split_for(split_, replicated(), batch);
  if (last_split_ == Split::Queries) {
    auto out = search_queries(p, queries, norms, batch, k, bd);
    if (bd) bd->wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
    return out;
  }
  std::vector<std::vector<Hit>> local(static_cast<std::size_t>(std::max(batch, 0)));
  if (rows_ > 0 && batch > 0) {
    if (stream_) {
      local = stream_->search(p, queries, norms, batch, k, bd);
      fallbacks_ = stream_->last().fallbacks;
    } else {
      if (!many_) many_ = std::make_unique<BatchSearcher>(*resident_);
      local = many_->search(p, queries, norms, batch, k, bd);
      fallbacks_ = many_->last_fallbacks();
    }
    for (auto& l : local) offset_rows(l, first_);
  }
  auto out = exchange(std::move(local), k, bd);
  if (bd) bd->wall_ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
  return out;
}

std::vector<std::vector<Hit>> ShardSearcher::search_queries(const BatchPipeline& p, const float* queries,
                                                            const float* norms, int batch, int k, Breakdown* bd) {
  const auto [lo, hi] = distancies::shard_rows(batch, comm_.rank(), comm_.size());
  std::vector<std::vector<Hit>> local;
  if (hi > lo) {
    if (!whole_many_) whole_many_ = std::make_unique<BatchSearcher>(*whole_);
    local = whole_many_->search(p, queries + lo * whole_->dim, norms + lo, static_cast<int>(hi - lo), k, bd);
    fallbacks_ = whole_many_->last_fallbacks();
  }
  return exchange_answers(std::move(local), batch, k, bd);
}

std::vector<std::vector<Hit>> ShardSearcher::search(const BatchPipeline& p, const std::vector<Query>& qs, int k,
                                                    bool keep_query_words, Breakdown* bd) {
  const PackedQueries q =
      pack_queries(qs, resident_ ? resident_->dim : stream_->rows().dim, k, keep_query_words, total_);
  auto out = search(p, q.vectors.data(), q.norms.data(), q.batch(), q.k, bd);
  finish_queries(out, qs, k, keep_query_words);
  return out;
}

}  // namespace distancies
