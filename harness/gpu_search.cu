#include "harness/gpu_search.hpp"

#include "harness/runtime/precision.hpp"
#include "variants/embeddings/plan.hpp"

#include <algorithm>
#include <cstring>

namespace distancies {

float Breakdown::kernel_ms() const {
  float s = 0;
  for (const auto& st : stages) s += st.transfer ? 0 : st.ms;
  return s;
}

float Breakdown::transfer_ms() const {
  float s = 0;
  for (const auto& st : stages) s += st.transfer ? st.ms : 0;
  return s;
}

float Breakdown::stage_ms(const std::string& name) const {
  float s = 0;
  for (const auto& st : stages) s += st.name == name ? st.ms : 0;
  return s;
}

void Workspace::allocate(int n_, int k_, int dim_, std::size_t temp_) {
  // The old buffers go first (the peak stays one workspace); an allocation that fails leaves
  // this workspace empty, which fits nothing, rather than half-sized buffers that claim to fit.
  *this = Workspace();
  Workspace w;
  w.n = n_;
  w.k = k_;
  w.dim = dim_;
  w.capacity = topk_capacity(n_, k_);
  w.temp_bytes = temp_;
  w.sims = DeviceBuffer(w.capacity * sizeof(float), "similarities");
  w.idx = DeviceBuffer(w.capacity * sizeof(int), "row indices");
  w.alt_sims = DeviceBuffer(w.capacity * sizeof(float), "merge buffer");
  w.alt_idx = DeviceBuffer(w.capacity * sizeof(int), "merge buffer");
  w.temp = DeviceBuffer(temp_, "top-k scratch");
  w.query = DeviceBuffer(static_cast<std::size_t>(dim_) * sizeof(float), "query");
  w.status = DeviceBuffer(sizeof(int), "status flag");
  *this = std::move(w);
}

TopkState Workspace::topk_state() const {
  TopkState s;
  s.n = n;
  s.k = k;
  s.capacity = capacity;
  s.sims = sims.as<float>();
  s.idx = idx.as<int>();
  s.alt_sims = alt_sims.as<float>();
  s.alt_idx = alt_idx.as<int>();
  s.temp = temp.get();
  s.temp_bytes = temp_bytes;
  s.status = status.as<int>();
  return s;
}

// A pool of events reused across queries; marks pair them around each stage.
struct GpuSearcher::Timer {
  struct Mark {
    const char* name;
    bool transfer;
    Event* a;
    Event* b;
  };
  std::vector<std::unique_ptr<Event>> pool;
  std::size_t used = 0;
  std::vector<Mark> marks;

  Event* next() {
    if (used == pool.size()) pool.push_back(std::make_unique<Event>());
    return pool[used++].get();
  }
  void reset() {
    used = 0;
    marks.clear();
  }
};

GpuSearcher::GpuSearcher(const DeviceModel& model, const Model* host, Options opt)
    : model_(model), host_(host), opt_(opt), timer_(std::make_unique<Timer>()) {
  require_device();
  stream_ = Stream(cudaStreamNonBlocking);
}

GpuSearcher::~GpuSearcher() = default;

std::vector<Hit> GpuSearcher::search(const Pipeline& p, const float* query, float query_norm, int k, Breakdown* bd) {
  using clock = std::chrono::steady_clock;
  const auto wall0 = clock::now();
  const int n = static_cast<int>(model_.rows);
  const int dim = model_.dim;
  const Plan plan = make_plan(p, n, dim, k);
  const DotVariant* dv = plan.dot;
  const std::vector<const TopkStage*>& stages = plan.stages;
  const std::size_t temp = plan.temp_bytes;
  const bool pinned = plan.habits.pinned_host && !opt_.force_pageable;
  const DeviceModel::Reduced* reduced = p.storage == Storage::F32 ? nullptr : &model_.reduced(p.storage);
  // The reduced path is refused (the exact fallback answers, counted) when the 16-bit copy cannot
  // hold this model's values, or when products or norms could leave fp32's normal range, where
  // the bound does not hold (harness/runtime/precision.hpp).
  const std::string refused = !reduced ? std::string()
                              : reduced->out_of_range
                                  ? std::string("the model's values do not fit ") + storage_name(p.storage)
                              : !reduced_in_range(query_norm, model_.norm_range())
                                  ? std::string("the query and the model's norms leave fp32's normal range")
                                  : std::string();
  if (!refused.empty()) {
    if (!plan.fallback) throw Error(std::string(p.name) + ": " + refused);
    ++counts_.refused;
    return search(*plan.fallback, query, query_norm, k, bd);
  }

  Timer& t = *timer_;
  t.reset();
  const bool timed = bd != nullptr;
  auto mark = [&](const char* name, bool transfer, auto&& fn) {
    Event* a = timed ? t.next() : nullptr;
    Event* b = timed ? t.next() : nullptr;
    if (a) a->record(stream_);
    fn();
    if (b) b->record(stream_);
    if (timed) t.marks.push_back({name, transfer, a, b});
    if (plan.habits.sync_each_stage) CUDA_CHECK(cudaStreamSynchronize(stream_));
  };
  Event* start = timed ? t.next() : nullptr;
  Event* end = timed ? t.next() : nullptr;
  if (start) start->record(stream_);

  DeviceBuffer fresh_vectors, fresh_norms;
  const float* vectors = model_.d_vectors();
  const float* norms = model_.d_norms();
  if (plan.habits.copy_model_every_query) {
    if (!host_) throw Error(std::string("pipeline ") + p.name + " copies the host model on every query; none is loaded");
    fresh_vectors = DeviceBuffer(model_.vector_bytes(), "the per-query model copy");
    fresh_norms = DeviceBuffer(static_cast<std::size_t>(n) * sizeof(float), "the per-query norms copy");
    mark("model_h2d", true, [&] {
      CUDA_CHECK(cudaMemcpyAsync(fresh_vectors.get(), host_->vectors.data(), model_.vector_bytes(),
                                 cudaMemcpyHostToDevice, stream_));
      CUDA_CHECK(cudaMemcpyAsync(fresh_norms.get(), host_->norms.data(), static_cast<std::size_t>(n) * sizeof(float),
                                 cudaMemcpyHostToDevice, stream_));
    });
    vectors = fresh_vectors.as<float>();
    norms = fresh_norms.as<float>();
  }

  Workspace local;
  Workspace* ws = &ws_;
  if (plan.habits.scratch_per_query) {
    local.allocate(n, k, dim, temp);
    ws = &local;
  } else if (!ws_.fits(n, k, dim, temp)) {
    ws_.allocate(n, k, dim, std::max(temp, ws_.temp_bytes));
  }

  const std::size_t query_bytes = static_cast<std::size_t>(dim) * sizeof(float);
  const int kk = std::min(k, n);
  const std::size_t result_bytes = static_cast<std::size_t>(kk) * (sizeof(float) + sizeof(int)) + sizeof(int);
  if (pinned && pinned_bytes_ < query_bytes + result_bytes) {
    pinned_ = std::make_unique<PinnedBuffer>(query_bytes + result_bytes);
    pinned_bytes_ = query_bytes + result_bytes;
  }
  std::vector<float> host_sims(static_cast<std::size_t>(kk));
  std::vector<int> host_idx(static_cast<std::size_t>(kk));
  float* res_sims = pinned ? reinterpret_cast<float*>(pinned_->as<char>() + query_bytes) : host_sims.data();
  int* res_idx = pinned ? reinterpret_cast<int*>(res_sims + kk) : host_idx.data();
  int host_status = 0;
  int* res_status = pinned ? res_idx + kk : &host_status;

  mark("query_h2d", true, [&] {
    const float* src = query;
    if (pinned) {
      std::memcpy(pinned_->as<float>(), query, query_bytes);
      src = pinned_->as<float>();
    }
    CUDA_CHECK(cudaMemcpyAsync(ws->query.get(), src, query_bytes, cudaMemcpyHostToDevice, stream_));
  });

  const DotArgs args{vectors, norms, n, dim, model_.ld, ws->query.as<float>(), query_norm, ws->sims.as<float>(),
                     ws->idx.as<int>()};
  if (dv) mark("dot", false, [&] { dv->launch(args, stream_); });

  TopkState st = ws->topk_state();
  st.n = n;
  st.k = k;
  st.dot = &args;
  if (reduced) {
    st.reduced = reduced->data.get();
    st.storage = p.storage;
    st.reduced_ld = reduced_leading_dim(dim);
    st.error_bound = reduced_error_bound(p.storage, dim, query, query_norm, reduced->min_norm);
  }
  for (const TopkStage* s : stages) mark(s->name, false, [&] { s->run(st, stream_); });

  mark("result_d2h", true, [&] {
    if (kk == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(res_sims, st.sims, kk * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaMemcpyAsync(res_idx, st.idx, kk * sizeof(int), cudaMemcpyDeviceToHost, stream_));
    if (plan.fallback) CUDA_CHECK(cudaMemcpyAsync(res_status, st.status, sizeof(int), cudaMemcpyDeviceToHost, stream_));
  });
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  // Per-query frees belong to the query's cost (the study's V1-V3 paid them).
  local = Workspace();
  fresh_vectors = DeviceBuffer();
  fresh_norms = DeviceBuffer();
  if (end) end->record(stream_);

  std::vector<Hit> hits = hits_from(res_sims, res_idx, kk, n);

  if (bd) {
    bd->stages.clear();
    for (const auto& m : t.marks) bd->stages.push_back({m.name, m.transfer, elapsed_ms(*m.a, *m.b)});
    bd->total_ms = elapsed_ms(*start, *end);
    bd->wall_ms = std::chrono::duration<double, std::milli>(clock::now() - wall0).count();
  }
  if (reduced && plan.fallback) ++(*res_status != 0 ? counts_.uncertified : counts_.certified);
  if (plan.fallback && *res_status != 0) {
    // Not certified exact (near-ties within the error bound, or k too large): the fallback
    // pipeline answers; its whole time is added to this query's as one "fallback" stage.
    Breakdown fb;
    hits = search(*plan.fallback, query, query_norm, k, bd ? &fb : nullptr);
    if (bd) {
      bd->stages.push_back({"fallback", false, fb.total_ms});
      bd->total_ms += fb.total_ms;
      bd->wall_ms = std::chrono::duration<double, std::milli>(clock::now() - wall0).count();
    }
  }
  return hits;
}

std::vector<Hit> hits_from(const float* sims, const int* rows, int k, std::int64_t model_rows) {
  std::vector<Hit> hits;
  hits.reserve(static_cast<std::size_t>(std::max(k, 0)));
  for (int i = 0; i < k; ++i)
    if (rows[i] >= 0 && rows[i] < model_rows) hits.push_back({rows[i], sims[i]});
  return hits;
}

int request_k(const Query& q, int k, bool keep_query_words, std::int64_t rows) {
  std::int64_t want = k + (keep_query_words ? 0 : static_cast<std::int64_t>(q.word_rows.size()));
  return static_cast<int>(std::max<std::int64_t>(1, std::min(want, std::max<std::int64_t>(rows, 1))));
}

std::vector<Hit> GpuSearcher::search(const Pipeline& p, const Query& q, int k, bool keep_query_words, Breakdown* bd) {
  if (k <= 0) throw Error("k must be at least 1");
  auto hits = search(p, q.vector.data(), q.norm, request_k(q, k, keep_query_words, model_.rows), bd);
  if (!keep_query_words) return drop_excluded(hits, q.word_rows, k);
  if (static_cast<int>(hits.size()) > k) hits.resize(static_cast<std::size_t>(k));
  return hits;
}

}  // namespace distancies
