#include "harness/cli/session.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "harness/cpu_search.hpp"
#include "harness/expression.hpp"
#include "harness/formats.hpp"
#include "harness/model_upload.hpp"
#include "runtime/device_model.hpp"
#include "runtime/error.hpp"
#include "variants/embeddings/auto_plan.hpp"
#include "variants/embeddings/model_copies.hpp"

namespace distancies::cli {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// A pipeline or a batch pipeline by name; unknown names list both tables.
void resolve_variant(const std::string& name, const Pipeline*& one, const BatchPipeline*& many) {
  for (const auto& p : pipelines())
    if (name == p.name) {
      one = &p;
      return;
    }
  for (const auto& p : batch_pipelines())
    if (name == p.name) {
      many = &p;
      return;
    }
  std::string known;
  for (const auto& p : pipelines()) known += std::string(known.empty() ? "" : ", ") + p.name;
  std::string batch;
  for (const auto& p : batch_pipelines()) batch += std::string(batch.empty() ? "" : ", ") + p.name;
  throw Error("unknown pipeline '" + name + "' (known: " + known + "; batch: " + batch + ")");
}

}  // namespace

Session::Session(const SearchOptions& o) : o_(o) {
  if (o.k < 1) throw Error("-k must be at least 1");
  if (o.device != "auto" && o.device != "gpu" && o.device != "cpu")
    throw Error("--device must be gpu, cpu or auto, not '" + o.device + "'");
  auto_ = o.variant.empty() || o.variant == "auto";
  if (auto_)
    one_ = &exact_pipeline();  // chosen again per query on the GPU; on the CPU, one query at a time
  else
    resolve_variant(o.variant, one_, many_);  // an unknown name fails before the model loads
  if (o.device == "gpu") require_device();
  use_gpu_ = o.device == "gpu" || (o.device == "auto" && device_status().available);
  const bool scaled = o.stream || o.gpus > 0 || o.gpu_memory_limit || o.chunk_rows > 0;
  if (scaled && !use_gpu_)
    throw Error(std::string("--stream, --gpus, --gpu-memory-limit and --chunk-rows search on the GPU, and ") +
                (o.device == "cpu" ? "--device cpu was given"
                                   : "there is no usable CUDA GPU (" + device_status().reason + ")"));
  if (o.replicate && o.gpus == 0) throw Error("--replicate shares a model over the ranks of --gpus N: give --gpus");
  if (o.replicate && (o.stream || o.gpu_memory_limit || o.chunk_rows > 0))
    throw Error("--replicate holds the whole model resident on every GPU: it cannot be streamed");
  if (o.gpus > 0 && o.also_cpu)
    throw Error("--cpu searches the whole model on the host, and with --gpus each rank holds only its rows");
  if (o.device == "auto" && !use_gpu_)
    std::fprintf(stderr, "no usable CUDA GPU (%s): searching on the CPU\n", device_status().reason.c_str());
  load(o);
}

void Session::load(const SearchOptions& o) {
  LoadOptions lo;
  lo.format = parse_format(o.format);
  if (!use_gpu_) {
    const auto t0 = clock_type::now();
    model_ = load_model(o.model, lo);
    std::fprintf(stderr, "loaded %s: %lld x %d (%s) in %.1f ms\n", o.model.c_str(), static_cast<long long>(model_.rows),
                 model_.dim, model_.format.c_str(), ms_since(t0));
    return;
  }
  if (o.stream || o.gpus > 0 || o.chunk_rows > 0) return load_scaled(o, lo, o.gpus > 0 ? "--gpus" : "--stream");
  if (o.gpu_memory_limit) return load_scaled(o, lo, nullptr);  // resident if it fits the limit
  ResidentModel r;
  try {
    r = load_resident(o.model, lo, !o.pageable);
  } catch (const OutOfMemory& e) {
    std::fprintf(stderr, "distancies: note: the model does not fit the GPU (%s): streaming it from host memory\n",
                 e.what());
    return load_scaled(o, lo, "the model does not fit the GPU");
  }
  model_ = std::move(r.host);
  dm_ = std::move(r.device);
  const LoadTimings& t = r.timings;
  std::fprintf(stderr, "loaded %s: %lld x %d (%s) and made it resident on %s in %.1f ms (%s host memory%s)\n",
               o.model.c_str(), static_cast<long long>(model_.rows), model_.dim, model_.format.c_str(),
               describe_device(device_status()).c_str(), t.total_ms, o.pageable ? "pageable" : "pinned",
               t.overlapped ? ", upload overlapped with the read" : "");
  if (o.timings) {
    const LoadFloors f = measure_load_floors(o.model);
    const double gb = t.vector_bytes / 1e9;
    const double copy_floor_ms = f.copy_gb_per_s > 0 ? gb / f.copy_gb_per_s * 1e3 : 0;
    std::fprintf(stderr,
                 "timings: load %.1f ms = vectors %.1f ms (%.2f GB by %u threads, %.1f GB/s, copy overlapped) + rest "
                 "%.1f ms (validation; vocabulary and norms beyond the vector read) + upload tail %.1f ms; floors: "
                 "sequential read of the "
                 "file %.1f ms (%.1f GB/s), pinned copy of the vectors %.1f ms (%.1f GB/s); load = %.2f x (read + "
                 "copy floors)\n",
                 t.total_ms, t.read_ms, gb, t.readers, t.read_ms > 0 ? gb / t.read_ms * 1e3 : 0.0, t.rest_ms,
                 t.upload_ms, f.read_ms, f.read_gb_per_s, copy_floor_ms, f.copy_gb_per_s,
                 t.total_ms / (f.read_ms + copy_floor_ms));
  }
  GpuSearcher::Options so;
  so.force_pageable = o.pageable;
  gpu_ = std::make_unique<GpuSearcher>(*dm_, &model_, so);
}

void Session::load_scaled(const SearchOptions& o, const LoadOptions& lo, const char* why) {
  StreamOptions so;
  so.gpu_memory_limit = o.gpu_memory_limit;
  so.chunk_rows = o.chunk_rows;
  if (o.gpus > 0) return load_sharded(o, lo, so);
  const auto t0 = clock_type::now();
  model_ = load_model(o.model, lo);
  const double gb = static_cast<double>(model_.rows) * model_.ld * sizeof(float) / 1e9;
  if (!why) {  // only a memory limit: resident when the model fits it with room for the search
    if (gb * 1e9 < 0.85 * static_cast<double>(o.gpu_memory_limit)) {
      dm_ = std::make_unique<DeviceModel>(upload_model(model_, !o.pageable));
      gpu_ = std::make_unique<GpuSearcher>(*dm_, &model_);
      std::fprintf(stderr, "loaded %s: %lld x %d, resident (%.2f GB within --gpu-memory-limit) in %.1f ms\n",
                   o.model.c_str(), static_cast<long long>(model_.rows), model_.dim, gb, ms_since(t0));
      return;
    }
    why = "larger than --gpu-memory-limit";
  }
  pinned_ = std::make_unique<PinnedModel>(PinnedModel::register_model(model_));
  stream_ = std::make_unique<StreamSearcher>(pinned_->rows(), so);
  std::fprintf(stderr, "loaded %s: %lld x %d (%.2f GB) into page-locked host memory in %.1f ms; streamed to %s (%s)\n",
               o.model.c_str(), static_cast<long long>(model_.rows), model_.dim, gb, ms_since(t0),
               describe_device(device_status()).c_str(), why);
}

void Session::load_sharded(const SearchOptions& o, const LoadOptions& lo, const StreamOptions& so) {
  const auto t0 = clock_type::now();
  const ProcessGroup g = process_group_from_env(o.gpus);
  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  if (g.local_rank >= devices)
    throw Error("--gpus " + std::to_string(g.size) + ": this rank would use GPU " + std::to_string(g.local_rank) +
                " but this host has " + std::to_string(devices) + " GPU" + (devices == 1 ? "" : "s"));
  CUDA_CHECK(cudaSetDevice(g.local_rank));
  quiet_ = g.rank != 0;
  ShardOptions sh;
  sh.stream = o.stream || o.gpu_memory_limit || o.chunk_rows;
  sh.stream_options = so;
  // A native model: this rank reads its rows and the vocabulary, nothing else. Another format is
  // read whole by every rank (it has no row offsets to seek to), and says how to avoid that.
  sh.replicate = o.replicate;
  const bool native =
      !o.replicate && (lo.format == Format::Auto ? detect_format(o.model) : lo.format) == Format::Native;
  std::int64_t first = 0, total = 0;
  if (native) {
    vocab_ = std::make_unique<NativeVocabulary>(o.model);
    total = vocab_->rows();
    const auto range = shard_rows(total, g.rank, g.size);
    first = range.first;
    LoadOptions mine = lo;
    mine.first_row = range.first;
    mine.last_row = range.second;
    model_ = load_model(o.model, mine);
  } else {
    model_ = load_model(o.model, lo);
    total = model_.rows;
    if (!quiet_ && !o.replicate)
      std::fprintf(stderr,
                   "distancies: note: every rank reads all of %s (%s has no row offsets): convert it to the native "
                   "format (distancies convert %s MODEL.dsv) and each rank reads only its rows\n",
                   o.model.c_str(), model_.format.c_str(), o.model.c_str());
  }
  comm_ = std::make_unique<NcclComm>(g);
  if (sh.stream) pinned_ = std::make_unique<PinnedModel>(PinnedModel::register_model(model_));
  const HostRows held = sh.stream ? pinned_->rows() : host_rows(model_);
  shard_ = native ? std::make_unique<ShardSearcher>(*comm_, held, first, total, sh)
                  : std::make_unique<ShardSearcher>(*comm_, held, sh);
  if (!quiet_)
    std::fprintf(stderr, "loaded %s: %lld x %d; rank %d of %d %s rows %lld-%lld%s%s (NCCL %s) in %.1f ms\n",
                 o.model.c_str(), static_cast<long long>(total), model_.dim, g.rank, g.size,
                 o.replicate ? "holds every row (a replica), searches" : "holds",
                 static_cast<long long>(shard_->first_row()),
                 static_cast<long long>(shard_->first_row() + shard_->shard_rows() - 1), native ? ", read alone" : "",
                 shard_->streamed() ? ", streamed" : ", resident", comm_->version().c_str(), ms_since(t0));
}

std::vector<Hit> Session::search_one(const Query& q, Breakdown* bd) {
  if (stream_) return stream_->search(*one_, q, o_.k, o_.keep_query_words, bd);
  if (shard_) return shard_->search(*one_, q, o_.k, o_.keep_query_words, bd);
  return gpu_->search(*one_, q, o_.k, o_.keep_query_words, bd);
}

std::vector<std::vector<Hit>> Session::search_many(const std::vector<Query>& qs, Breakdown* bd, BatchSummary& summary) {
  summary.batch_searcher = true;
  if (stream_) {
    auto out = stream_->search(*many_, qs, o_.k, o_.keep_query_words, bd);
    summary.fallbacks = stream_->last().fallbacks;
    return out;
  }
  if (shard_) {
    auto out = shard_->search(*many_, qs, o_.k, o_.keep_query_words, bd);
    summary.fallbacks = shard_->last_fallbacks();
    return out;
  }
  auto out = batch_searcher().search(*many_, qs, o_.k, o_.keep_query_words, bd);
  summary.sub_batch = batch_->last_sub_batch();
  summary.fallbacks = batch_->last_fallbacks();
  // auto: the live share of redone queries replaces the probe's (a climbing share switches).
  if (auto_ && rates_) rates_->observe(*many_, batch_->last_fallbacks(), static_cast<long long>(qs.size()));
  return out;
}

void Session::choose_one() {
  if (!auto_) return;
  if (stream_) {  // streamed: the bytes a query moves decide (the int8 copy from host memory)
    const StreamStats& t = stream_->last();
    const bool i8_last = one_ && one_->storage == Storage::I8 && t.layout.chunks > 0;
    const AutoChoice c =
        auto_streamed_one_query(o_.k, model_.dim, ++queries_seen_, stream_->holds_host_copy(Storage::I8),
                                i8_last ? static_cast<double>(t.fallbacks) / static_cast<double>(t.layout.chunks) : 0);
    one_ = c.one;
    many_ = nullptr;
    chosen_by_ = c.why;
    return;
  }
  // Streamed or sharded: no 16-bit copy is kept (a chunk's is made per chunk), so count it unmade.
  const long long seen = dm_ ? ++queries_seen_ : 0;
  AutoChoice c =
      auto_one_query(o_.k, seen, dm_ && keeps_copy(*dm_, *reduced_copy_row(Storage::F16)), rates_ ? &*rates_ : nullptr);
  if (dm_ && !rates_ && c.one == &f16_one_query_pipeline()) {  // before relying on the copy, ask the data
    measure_rates();
    c = auto_one_query(o_.k, seen, keeps_copy(*dm_, *reduced_copy_row(Storage::F16)), &*rates_);
  }
  one_ = c.one;
  many_ = nullptr;
  chosen_by_ = c.why;
}

void Session::choose_batch(int batch) {
  if (!auto_) return;
  const int cc = use_gpu_ ? device_status().props.major : 0;
  if (dm_ && !rates_) measure_rates();
  const AutoChoice c = auto_batch(batch, o_.k, !dm_ || keeps_copy(*dm_, *reduced_copy_row(Storage::F16)), model_.dim,
                                  cc, rates_ ? &*rates_ : nullptr);
  many_ = c.many;
  chosen_by_ = c.why;
}

BatchSearcher& Session::batch_searcher() {
  if (!batch_) {
    batch_ = std::make_unique<BatchSearcher>(*dm_);
    std::fprintf(stderr, "started cuBLAS in %.1f ms (before any batch is timed)\n", batch_->startup_ms());
  }
  return *batch_;
}

// Once per resident model: what its data does to the certificates (harness/embeddings/data_probe.hpp).
void Session::measure_rates() {
  BatchSearcher& bs = batch_searcher();
  const auto t0 = clock_type::now();
  rates_ = probe_data_rates(*dm_, bs, o_.k, device_status().props.major);
  int most = rates_->probe_queries;
  for (const auto& r : rates_->batch) most = std::max(most, r.large_batch);
  std::fprintf(stderr, "measured the certificates on %d of the model's rows in %.1f ms (once per model)\n", most,
               ms_since(t0));
}

Session::~Session() = default;

void Session::add_cpu(Answer& a, const Query& q, bool beside_gpu) const {
  const auto t0 = clock_type::now();
  if (vocab_) throw Error("--cpu searches the whole model on the host, and this rank holds only its rows");
  const auto exclude = o_.keep_query_words ? std::vector<std::int32_t>{} : q.word_rows;
  const auto cpu_hits = sequential_search(model_, q.vector.data(), q.norm, o_.k, exclude);
  a.cpu = CpuTiming{ms_since(t0), std::nullopt};
  if (!beside_gpu) {
    a.hits = cpu_hits;
    return;
  }
  bool same = cpu_hits.size() == a.hits.size();
  for (std::size_t i = 0; same && i < cpu_hits.size(); ++i) same = cpu_hits[i].row == a.hits[i].row;
  a.cpu->same_rows_as_gpu = same;
}

GpuTiming Session::gpu_timing(const char* pipeline, Breakdown bd) const {
  return {pipeline, auto_ ? chosen_by_ : std::string(), device_status().props.name, std::move(bd)};
}

void Session::run(const std::string& text, bool also_cpu) {
  if (use_gpu_) choose_one();
  if (!one_) {  // a batch pipeline answers a single query as a batch of one
    BatchSummary one;
    one.lines = 1;
    if (run_queries({{1, text}}, also_cpu, one)) throw Error("the query failed");
    return;
  }
  const Query q = make_query(words(), text);
  if (!q.note.empty()) std::fprintf(stderr, "distancies: note: %s\n", q.note.c_str());
  Answer a;
  a.query = text;
  a.k = o_.k;
  if (use_gpu_) {
    Breakdown bd;
    a.hits = search_one(q, &bd);
    a.gpu = gpu_timing(one_->name, std::move(bd));
    if (also_cpu) add_cpu(a, q, true);
  } else {
    add_cpu(a, q, false);
  }
  print(a);
}

int Session::run_batch(const std::vector<BatchLine>& lines, bool also_cpu) {
  BatchSummary summary;
  summary.lines = static_cast<int>(lines.size());
  std::vector<BatchLine> queries;
  const IsWord word = [this](std::string_view w) { return is_word(w); };
  for (const BatchLine& l : lines) {
    std::string text;
    const LineKind kind = classify_batch_line(l.text, word, text);
    if (kind == LineKind::blank) ++summary.blank;
    if (kind == LineKind::comment) ++summary.comments;
    if (kind == LineKind::query) queries.push_back({l.line, std::move(text)});
  }
  return run_queries(queries, also_cpu, std::move(summary));
}

int Session::run_queries(const std::vector<BatchLine>& lines, bool also_cpu, BatchSummary summary) {
  std::vector<Answer> out;
  std::vector<Query> queries;
  std::vector<std::size_t> slot;  // out index of each parsed query
  for (const auto& l : lines) {
    Answer a;
    a.line = l.line;
    a.query = l.text;
    a.k = o_.k;
    try {
      queries.push_back(make_query(words(), l.text));
      if (!queries.back().note.empty())
        std::fprintf(stderr, "distancies: note: line %d: %s\n", l.line, queries.back().note.c_str());
      slot.push_back(out.size());
    } catch (const Error& e) {
      a.error = e.what();
    }
    out.push_back(std::move(a));
  }
  summary.queries = last_batch_queries_ = static_cast<int>(lines.size());
  summary.answered = static_cast<int>(queries.size());
  summary.failed = summary.queries - summary.answered;
  summary.k = o_.k;
  const auto t0 = clock_type::now();
  if (use_gpu_) {
    choose_batch(static_cast<int>(queries.size()));
    Breakdown bd;
    std::vector<std::vector<Hit>> hits;
    if (many_) {
      hits = search_many(queries, &bd, summary);
    } else {  // a one-query pipeline, once per query
      Breakdown one;
      for (const Query& q : queries) {
        one = Breakdown{};
        hits.push_back(search_one(q, &one));
        for (const auto& s : one.stages) bd.stages.push_back(s);
        bd.total_ms += one.total_ms;
      }
    }
    bd.wall_ms = ms_since(t0);
    summary.gpu = gpu_timing(many_ ? many_->name : one_->name, std::move(bd));
    for (std::size_t i = 0; i < queries.size(); ++i) {
      Answer& a = out[slot[i]];
      a.hits = std::move(hits[i]);
      if (also_cpu) add_cpu(a, queries[i], true);
    }
  } else {
    for (std::size_t i = 0; i < queries.size(); ++i) add_cpu(out[slot[i]], queries[i], false);
    summary.cpu_ms = ms_since(t0);
  }
  summary.wall_ms = ms_since(t0);
  if (quiet_) return summary.failed;  // rank 0 answers for the group
  for (const Answer& a : out) {
    if (!a.error.empty()) std::fprintf(stderr, "distancies: error: line %d: %s\n", a.line, a.error.c_str());
    if (o_.json || a.error.empty()) print(a);
  }
  if (o_.json)
    std::cout << to_json(summary).dump() << std::endl;
  else
    print_text(summary);
  return summary.failed;
}

void Session::print(const Answer& a) const {
  if (quiet_) return;
  if (o_.json)
    std::cout << to_json(a, words()).dump() << std::endl;
  else
    print_text(a, words());
}

}  // namespace distancies::cli
