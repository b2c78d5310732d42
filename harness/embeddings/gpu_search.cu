#include "harness/embeddings/gpu_search.hpp"

#include "kernels/common/small_copies.cuh"
#include "runtime/launch.hpp"
#include "variants/embeddings/plan.hpp"
#include "variants/embeddings/precision.hpp"

#include <algorithm>
#include <cmath>
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

GpuSearcher::GpuSearcher(DeviceModel& model, const Model* host, Options opt)
    : model_(model), host_(host), opt_(opt), timer_(std::make_unique<Timer>()) {
  require_device();
  stream_ = Stream(cudaStreamNonBlocking);
}

GpuSearcher::~GpuSearcher() = default;

// One search call's state: the plan, the model it reads, the workspace, where the result lands.
struct GpuSearcher::Call {
  Plan plan;
  int n = 0, dim = 0, k = 0, kk = 0;  // kk: results that exist (fewer rows than k)
  // The copies the plan reads, prepared before it runs (prepare_copies).
  struct Copies {
    const ReducedCopy* reduced = nullptr;  // the pipeline's reduced copy, if it uses one
    const ModelCentre* centre = nullptr;   // ... the centred copy's centre, where it is centred
  } copies;
  // The model rows this call reads: the resident ones, or V1's fresh per-query copy.
  struct Rows {
    const float* vectors = nullptr;
    const float* norms = nullptr;
    DeviceBuffer fresh_vectors, fresh_norms;
  } rows;
  Workspace local;  // per-query scratch (V1-V3's habit)
  Workspace* ws = nullptr;
  DotArgs args{};
  TopkState state;
  // Where the k results land: the pinned staging, or host vectors where it is not used.
  struct Result {
    bool pinned = false;
    std::vector<float> host_sims;
    std::vector<int> host_idx;
    int host_status = 0;
    float* sims = nullptr;
    int* idx = nullptr;
    int* status = nullptr;
  } result;
  struct Timing {
    Event* start = nullptr;
    Event* end = nullptr;
    bool stage_events = false;  // an event pair around each step (Breakdown::stage_events)
  } timing;
};

// Records `fn` between two events when timed; syncs after it when the pipeline's habit says so.
template <class F>
void GpuSearcher::step(const Call& c, const char* name, bool transfer, F&& fn) {
  Timer& t = *timer_;
  Event* a = c.timing.stage_events ? t.next() : nullptr;
  Event* b = c.timing.stage_events ? t.next() : nullptr;
  if (a) a->record(stream_);
  fn();
  if (b) b->record(stream_);
  if (a) t.marks.push_back({name, transfer, a, b});
  if (c.plan.habits.sync_each_stage) CUDA_CHECK(cudaStreamSynchronize(stream_));
}

// Why the reduced path may not answer this query (empty: it may). The exact fallback answers
// instead, counted: the 16-bit copy cannot hold the model's values, or products or norms could
// leave fp32's normal range, where the bound does not hold (variants/embeddings/precision.hpp).
std::optional<Refusal> GpuSearcher::refusal(const Pipeline& p, const ReducedCopy* reduced, const float* query,
                                            float query_norm) const {
  if (!reduced) return std::nullopt;
  if (reduced->out_of_range) return Refusal{std::string("the model's values do not fit ") + storage_name(p.storage)};
  if (!reduced_in_range(query_norm, model_.norm_range()))
    return Refusal{"the query and the model's norms leave fp32's normal range"};
  if (p.storage == Storage::I8 && !i8_query_in_range(model_.dim, query))
    return Refusal{"the query's largest value is too small to split into int8 steps"};
  return std::nullopt;
}

// The model this call reads: the resident one, or (V1's habit) a fresh copy of the host model.
void GpuSearcher::bind_model(Call& c, const Pipeline& p) {
  c.rows.vectors = model_.d_vectors();
  c.rows.norms = model_.d_norms();
  if (!c.plan.habits.copy_model_every_query) return;
  if (!host_) throw Error(std::string("pipeline ") + p.name + " copies the host model on every query; none is loaded");
  const std::size_t norm_bytes = static_cast<std::size_t>(c.n) * sizeof(float);
  c.rows.fresh_vectors = DeviceBuffer(model_.vector_bytes(), "the per-query model copy");
  c.rows.fresh_norms = DeviceBuffer(norm_bytes, "the per-query norms copy");
  step(c, "model_h2d", true, [&] {
    CUDA_CHECK(cudaMemcpyAsync(c.rows.fresh_vectors.get(), host_->vectors.data(), model_.vector_bytes(),
                               cudaMemcpyHostToDevice, stream_));
    CUDA_CHECK(
        cudaMemcpyAsync(c.rows.fresh_norms.get(), host_->norms.data(), norm_bytes, cudaMemcpyHostToDevice, stream_));
  });
  c.rows.vectors = c.rows.fresh_vectors.as<float>();
  c.rows.norms = c.rows.fresh_norms.as<float>();
}

// The workspace (kept across queries, or per query by the pipeline's habit) and the result
// slots (pinned staging reused across queries, or pageable vectors).
void GpuSearcher::bind_buffers(Call& c) {
  const std::size_t temp = c.plan.temp_bytes;
  c.ws = &ws_;
  if (c.plan.habits.scratch_per_query) {
    c.local.allocate(c.n, c.k, c.dim, temp);
    c.ws = &c.local;
  } else if (!ws_.fits(c.n, c.k, c.dim, temp)) {
    ws_.allocate(c.n, c.k, c.dim, std::max(temp, ws_.temp_bytes));
  }
  const std::size_t query_bytes = static_cast<std::size_t>(c.dim) * sizeof(float);
  const std::size_t result_bytes = static_cast<std::size_t>(c.kk) * (sizeof(float) + sizeof(int)) + sizeof(int);
  if (c.result.pinned && pinned_bytes_ < query_bytes + result_bytes) {
    pinned_ = std::make_unique<PinnedBuffer>(query_bytes + result_bytes);
    pinned_bytes_ = query_bytes + result_bytes;
  }
  c.result.host_sims.resize(static_cast<std::size_t>(c.kk));
  c.result.host_idx.resize(static_cast<std::size_t>(c.kk));
  c.result.sims =
      c.result.pinned ? reinterpret_cast<float*>(pinned_->as<char>() + query_bytes) : c.result.host_sims.data();
  c.result.idx = c.result.pinned ? reinterpret_cast<int*>(c.result.sims + c.kk) : c.result.host_idx.data();
  c.result.status = c.result.pinned ? c.result.idx + c.kk : &c.result.host_status;
}

void GpuSearcher::upload_query(Call& c, const float* query) {
  const std::size_t query_bytes = static_cast<std::size_t>(c.dim) * sizeof(float);
  step(c, "query_h2d", true, [&] {
    const float* src = query;
    if (c.result.pinned) {
      std::memcpy(pinned_->as<float>(), query, query_bytes);
      src = pinned_->as<float>();
    }
    CUDA_CHECK(cudaMemcpyAsync(c.ws->query.get(), src, query_bytes, cudaMemcpyHostToDevice, stream_));
  });
}

// The dot variant (if any), then the stages in order. Only stages that declare reads_model get
// the model (TopkState::model); the others see an empty one.
void GpuSearcher::run_stages(Call& c, const Pipeline& p, const float* query, float query_norm) {
  c.args =
      DotArgs{c.rows.vectors,         c.rows.norms,       c.n, c.dim, model_.ld, c.ws->query.as<float>(), query_norm,
              c.ws->sims.as<float>(), c.ws->idx.as<int>()};
  if (c.plan.dot) step(c, "dot", false, [&] { c.plan.dot->launch(c.args, stream_); });
  ModelInputs model;
  model.dot = &c.args;
  if (c.copies.reduced) {
    model.reduced = c.copies.reduced->data.get();
    model.storage = p.storage;
    model.reduced_ld = storage_leading_dim(p.storage, c.dim);
    if (p.storage == Storage::I8) model.row_scale = c.copies.reduced->scale.as<float>();
    if (!c.copies.centre) {
      model.error_bound = reduced_error_bound(p.storage, c.dim, query, query_norm, c.copies.reduced->min_norm);
      if (p.storage == Storage::I8) model.row_bound_factor = i8_row_bound_factor(c.dim, query, query_norm);
    } else {
      const ModelCentre& centre = *c.copies.centre;
      const float rho = centre.rho;
      double qm = 0;  // q . mu / |q| from double, as centre_shift_kernel computes it for a batch
      for (int j = 0; j < c.dim; ++j) qm += static_cast<double>(query[j]) * centre.mean_host[j];
      model.shift = static_cast<float>(qm / query_norm);
      float correction = 0;
      if (p.storage == Storage::I8) {  // the query's part along mu meets only the rows' corrections
        const float w = centre.mean_norm2 > 0 ? static_cast<float>(qm / centre.mean_norm2) : 0.0f;
        const I8CentredBound b = i8_centred_bound(c.dim, query, query_norm, centre.mean_host.data(), w);
        model.row_correction = c.copies.reduced->correction.as<float>();
        model.correction_weight = w;
        model.row_bound_factor = b.row_bound_factor;
        correction = b.correction;
      }
      model.error_bound = with_centre_slack(
          reduced_error_bound(p.storage, c.dim, query, query_norm, c.copies.reduced->min_norm, rho, correction), rho);
    }
  }
  c.state = c.ws->topk_state();
  c.state.n = c.n;
  c.state.k = c.k;
  for (const TopkStage* s : c.plan.stages) {
    c.state.model = s->reads_model ? model : ModelInputs{};
    step(c, s->name, false, [&] { s->run(c.state, stream_); });
  }
}

// The top k (and the certificate flag, when there is a fallback) back to the host; then the
// per-query frees, which belong to the query's cost (the study's V1-V3 paid them).
void GpuSearcher::download_result(Call& c) {
  step(c, "result_d2h", true, [&] {
    if (c.kk == 0) return;
    if (c.result.pinned) {  // written by the GPU into the pinned slots (kernels/common/small_copies.cuh)
      const int* status = c.plan.fallback ? c.state.status : nullptr;
      launch_dependent(deliver_result_kernel<256>, blocks_for(c.kk, 256), 256, 0, stream_,
                       static_cast<const float*>(c.state.sims), static_cast<const int*>(c.state.idx), status, c.kk,
                       c.result.sims, c.result.idx, c.result.status);
      return;
    }
    CUDA_CHECK(cudaMemcpyAsync(c.result.sims, c.state.sims, c.kk * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaMemcpyAsync(c.result.idx, c.state.idx, c.kk * sizeof(int), cudaMemcpyDeviceToHost, stream_));
    if (c.plan.fallback)
      CUDA_CHECK(cudaMemcpyAsync(c.result.status, c.state.status, sizeof(int), cudaMemcpyDeviceToHost, stream_));
  });
  CUDA_CHECK(cudaStreamSynchronize(stream_));
  c.local = Workspace();
  c.rows.fresh_vectors = DeviceBuffer();
  c.rows.fresh_norms = DeviceBuffer();
  if (c.timing.end) c.timing.end->record(stream_);
}

void GpuSearcher::fill_breakdown(const Call& c, Breakdown& bd, double wall_ms) const {
  bd.stages.clear();
  for (const auto& m : timer_->marks) bd.stages.push_back({m.name, m.transfer, elapsed_ms(*m.a, *m.b)});
  bd.total_ms = elapsed_ms(*c.timing.start, *c.timing.end);
  bd.wall_ms = wall_ms;
}

// The reduced copy the plan names, made now where the model does not keep it yet: the centred
// one where the model is centred (its bound shrinks with rho; model_copies.hpp).
void GpuSearcher::prepare_copies(Call& c) {
  if (!c.plan.copy) return;
  const ModelCopyRow& row = prepare_centred_or_plain(model_, *c.plan.copy);
  c.copies.reduced = &copy_of<ReducedCopy>(model_, row);
  c.copies.centre = &row == c.plan.copy ? nullptr : used_centre(model_);
}

std::vector<Hit> GpuSearcher::search(const Pipeline& p, const float* query, float query_norm, int k, Breakdown* bd) {
  using clock = std::chrono::steady_clock;
  const auto wall0 = clock::now();
  auto wall_ms = [&] { return std::chrono::duration<double, std::milli>(clock::now() - wall0).count(); };
  Call c;
  c.n = static_cast<int>(model_.rows);
  c.dim = model_.dim;
  c.k = k;
  c.kk = std::min(k, c.n);
  c.plan = make_plan(p, c.n, c.dim, k);
  c.result.pinned = c.plan.habits.pinned_host && !opt_.force_pageable;
  prepare_copies(c);

  if (const auto refused = refusal(p, c.copies.reduced, query, query_norm)) {
    if (!c.plan.fallback) throw Error(std::string(p.name) + ": " + refused->why);
    ++counts_.refused;
    return search(*c.plan.fallback, query, query_norm, k, bd);
  }

  timer_->reset();
  if (bd) {
    c.timing.start = timer_->next();
    c.timing.end = timer_->next();
    c.timing.stage_events = bd->stage_events;
    c.timing.start->record(stream_);
  }
  bind_model(c, p);
  bind_buffers(c);
  upload_query(c, query);
  run_stages(c, p, query, query_norm);
  download_result(c);
  std::vector<Hit> hits = hits_from(c.result.sims, c.result.idx, c.kk, c.n);
  if (bd) fill_breakdown(c, *bd, wall_ms());

  const bool certified = *c.result.status == 0;
  if (c.copies.reduced && c.plan.fallback) ++(certified ? counts_.certified : counts_.uncertified);
  if (c.plan.fallback && !certified) {
    // Not certified exact (near-ties within the error bound, or k too large): the fallback
    // pipeline answers; its whole time is added to this query's as one "fallback" stage.
    Breakdown fb;
    fb.stage_events = bd ? bd->stage_events : false;
    hits = search(*c.plan.fallback, query, query_norm, k, bd ? &fb : nullptr);
    if (bd) {
      bd->stages.push_back({"fallback", false, fb.total_ms});
      bd->total_ms += fb.total_ms;
      bd->wall_ms = wall_ms();
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

std::vector<Hit> finish_query(std::vector<Hit> hits, const Query& q, int k, bool keep_query_words) {
  if (!keep_query_words) return drop_excluded(hits, q.word_rows, k);
  if (static_cast<int>(hits.size()) > k) hits.resize(static_cast<std::size_t>(k));
  return hits;
}

int request_k(const Query& q, int k, bool keep_query_words, std::int64_t rows) {
  std::int64_t want = k + (keep_query_words ? 0 : static_cast<std::int64_t>(q.word_rows.size()));
  return static_cast<int>(std::max<std::int64_t>(1, std::min(want, std::max<std::int64_t>(rows, 1))));
}

std::vector<Hit> GpuSearcher::search(const Pipeline& p, const Query& q, int k, bool keep_query_words, Breakdown* bd) {
  if (k <= 0) throw Error("k must be at least 1");
  return finish_query(search(p, q.vector.data(), q.norm, request_k(q, k, keep_query_words, model_.rows), bd), q, k,
                      keep_query_words);
}

}  // namespace distancies
