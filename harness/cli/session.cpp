#include "harness/cli/session.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "harness/cpu_search.hpp"
#include "harness/runtime/device_model.hpp"
#include "harness/runtime/error.hpp"
#include "harness/expression.hpp"
#include "harness/formats.hpp"

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

std::vector<BatchLine> read_batch_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open batch file '" + path + "'");
  std::vector<BatchLine> lines;
  std::string s;
  for (int n = 1; std::getline(in, s); ++n) {
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    const std::size_t b = s.find_first_not_of(" \t");
    if (b == std::string::npos || s[b] == '#') continue;
    lines.push_back({n, s.substr(b)});
  }
  if (in.bad()) throw Error("error reading batch file '" + path + "'");
  return lines;
}

Session::Session(const SearchOptions& o) : o_(o) {
  if (o.k < 1) throw Error("-k must be at least 1");
  if (o.device != "auto" && o.device != "gpu" && o.device != "cpu")
    throw Error("--device must be gpu, cpu or auto, not '" + o.device + "'");
  if (o.variant.empty()) {  // V4 for single queries, batch_tf32 for batches
    one_ = &pipeline("V4");
    many_ = &batch_pipeline("batch_tf32");
  } else {
    resolve_variant(o.variant, one_, many_);  // an unknown name fails before the model loads
  }
  if (o.device == "gpu") require_device();
  LoadOptions lo;
  lo.format = parse_format(o.format);
  auto t0 = clock_type::now();
  model_ = load_model(o.model, lo);
  std::fprintf(stderr, "loaded %s: %lld x %d (%s) in %.1f ms\n", o.model.c_str(), static_cast<long long>(model_.rows),
               model_.dim, model_.format.c_str(), ms_since(t0));
  use_gpu_ = o.device == "gpu" || (o.device == "auto" && device_status().available);
  if (o.device == "auto" && !use_gpu_)
    std::fprintf(stderr, "no usable CUDA GPU (%s): searching on the CPU\n", device_status().reason.c_str());
  if (use_gpu_) {
    require_device();
    t0 = clock_type::now();
    dm_ = std::make_unique<DeviceModel>(upload_model(model_, !o.pageable));
    GpuSearcher::Options so;
    so.force_pageable = o.pageable;
    gpu_ = std::make_unique<GpuSearcher>(*dm_, &model_, so);
    std::fprintf(stderr, "uploaded to %s (%s host memory) in %.1f ms\n", describe_device(device_status()).c_str(),
                 o.pageable ? "pageable" : "pinned", ms_since(t0));
  }
}

Session::~Session() = default;

void Session::add_cpu(Answer& a, const Query& q, bool beside_gpu) const {
  const auto t0 = clock_type::now();
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
  return {pipeline, device_status().props.name, std::move(bd)};
}

void Session::run(const std::string& text, bool also_cpu) {
  if (!one_) {  // a batch pipeline answers a single query as a batch of one
    if (run_batch({{1, text}}, also_cpu)) throw Error("the query failed");
    return;
  }
  const Query q = make_query(model_, text);
  if (!q.note.empty()) std::fprintf(stderr, "distancies: note: %s\n", q.note.c_str());
  Answer a;
  a.query = text;
  a.k = o_.k;
  if (use_gpu_) {
    Breakdown bd;
    a.hits = gpu_->search(*one_, q, o_.k, o_.keep_query_words, &bd);
    a.gpu = gpu_timing(one_->name, std::move(bd));
    if (also_cpu) add_cpu(a, q, true);
  } else {
    add_cpu(a, q, false);
  }
  print(a);
}

int Session::run_batch(const std::vector<BatchLine>& lines, bool also_cpu) {
  std::vector<Answer> out;
  std::vector<Query> queries;
  std::vector<std::size_t> slot;  // out index of each parsed query
  for (const auto& l : lines) {
    Answer a;
    a.line = l.line;
    a.query = l.text;
    a.k = o_.k;
    try {
      queries.push_back(make_query(model_, l.text));
      if (!queries.back().note.empty())
        std::fprintf(stderr, "distancies: note: line %d: %s\n", l.line, queries.back().note.c_str());
      slot.push_back(out.size());
    } catch (const Error& e) {
      a.error = e.what();
    }
    out.push_back(std::move(a));
  }
  BatchSummary summary;
  summary.queries = static_cast<int>(lines.size());
  summary.answered = static_cast<int>(queries.size());
  summary.failed = summary.queries - summary.answered;
  summary.k = o_.k;
  const auto t0 = clock_type::now();
  if (use_gpu_) {
    Breakdown bd;
    std::vector<std::vector<Hit>> hits;
    if (many_) {
      if (!batch_) batch_ = std::make_unique<BatchSearcher>(*dm_);
      hits = batch_->search(*many_, queries, o_.k, o_.keep_query_words, &bd);
      summary.batch_searcher = true;
      summary.sub_batch = batch_->last_sub_batch();
      summary.fallbacks = batch_->last_fallbacks();
    } else {  // a one-query pipeline, once per query
      Breakdown one;
      for (const Query& q : queries) {
        hits.push_back(gpu_->search(*one_, q, o_.k, o_.keep_query_words, &one));
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
  if (o_.json)
    std::cout << to_json(a, model_).dump() << std::endl;
  else
    print_text(a, model_);
}

}  // namespace distancies::cli
