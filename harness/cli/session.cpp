#include "harness/cli/session.hpp"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "harness/cpu_search.hpp"
#include "harness/device_model.hpp"
#include "harness/error.hpp"
#include "harness/expression.hpp"
#include "harness/formats.hpp"

namespace distancies::cli {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

nlohmann::json timing_json(const Breakdown& bd) {
  nlohmann::json stages = nlohmann::json::object();
  for (const auto& s : bd.stages) stages[s.name] = stages.value(s.name, 0.0) + s.ms;
  return {{"total_ms", bd.total_ms},       {"wall_ms", bd.wall_ms},
          {"kernel_ms", bd.kernel_ms()},   {"transfer_ms", bd.transfer_ms()},
          {"overhead_ms", bd.overhead_ms()}, {"stages_ms", stages}};
}

void print_timing(const char* what, const nlohmann::json& g) {
  std::printf("  %s %s: %.3f ms (kernels %.3f, transfers %.3f, overhead %.3f;", what,
              g["pipeline"].get<std::string>().c_str(), g["total_ms"].get<double>(), g["kernel_ms"].get<double>(),
              g["transfer_ms"].get<double>(), g["overhead_ms"].get<double>());
  for (const auto& [name, ms] : g["stages_ms"].items()) std::printf(" %s %.3f", name.c_str(), ms.get<double>());
  std::printf(")\n");
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

nlohmann::json Session::results_json(const std::vector<Hit>& hits) const {
  nlohmann::json r = nlohmann::json::array();
  for (std::size_t i = 0; i < hits.size(); ++i)
    r.push_back({{"rank", i + 1}, {"word", model_.words[hits[i].row]}, {"row", hits[i].row}, {"similarity", hits[i].sim}});
  return r;
}

void Session::add_cpu(nlohmann::json& j, const Query& q, const std::vector<Hit>* gpu_hits) const {
  const auto t0 = clock_type::now();
  const auto exclude = o_.keep_query_words ? std::vector<std::int32_t>{} : q.word_rows;
  const auto cpu_hits = sequential_search(model_, q.vector.data(), q.norm, o_.k, exclude);
  j["cpu"] = {{"total_ms", ms_since(t0)}};
  if (!gpu_hits) {
    j["results"] = results_json(cpu_hits);
    return;
  }
  bool same = cpu_hits.size() == gpu_hits->size();
  for (std::size_t i = 0; same && i < cpu_hits.size(); ++i) same = cpu_hits[i].row == (*gpu_hits)[i].row;
  j["cpu"]["same_rows_as_gpu"] = same;
}

void Session::run(const std::string& text, bool also_cpu) {
  if (!one_) {  // a batch pipeline answers a single query as a batch of one
    if (run_batch({{1, text}}, also_cpu)) throw Error("the query failed");
    return;
  }
  const Query q = make_query(model_, text);
  nlohmann::json j = {{"query", text}, {"k", o_.k}};
  if (use_gpu_) {
    Breakdown bd;
    const auto hits = gpu_->search(*one_, q, o_.k, o_.keep_query_words, &bd);
    j["gpu"] = timing_json(bd);
    j["gpu"]["pipeline"] = one_->name;
    j["gpu"]["device"] = device_status().props.name;
    j["results"] = results_json(hits);
    if (also_cpu) add_cpu(j, q, &hits);
  } else {
    add_cpu(j, q, nullptr);
  }
  print(j);
}

int Session::run_batch(const std::vector<BatchLine>& lines, bool also_cpu) {
  std::vector<nlohmann::json> out;
  std::vector<Query> queries;
  std::vector<std::size_t> slot;  // out index of each parsed query
  for (const auto& l : lines) {
    out.push_back({{"line", l.line}, {"query", l.text}, {"k", o_.k}});
    try {
      queries.push_back(make_query(model_, l.text));
      slot.push_back(out.size() - 1);
    } catch (const Error& e) {
      out.back()["error"] = e.what();
    }
  }
  nlohmann::json summary = {{"queries", lines.size()}, {"answered", queries.size()},
                            {"failed", lines.size() - queries.size()}, {"k", o_.k}};
  const auto t0 = clock_type::now();
  if (use_gpu_) {
    Breakdown bd;
    std::vector<std::vector<Hit>> hits;
    if (many_) {
      if (!batch_) batch_ = std::make_unique<BatchSearcher>(*dm_);
      hits = batch_->search(*many_, queries, o_.k, o_.keep_query_words, &bd);
      summary["sub_batch"] = batch_->last_sub_batch();
      summary["fallbacks"] = batch_->last_fallbacks();
    } else {  // a one-query pipeline, once per query
      Breakdown one;
      for (const Query& q : queries) {
        hits.push_back(gpu_->search(*one_, q, o_.k, o_.keep_query_words, &one));
        for (const auto& s : one.stages) bd.stages.push_back(s);
        bd.total_ms += one.total_ms;
      }
    }
    bd.wall_ms = ms_since(t0);
    summary["gpu"] = timing_json(bd);
    summary["gpu"]["pipeline"] = many_ ? many_->name : one_->name;
    summary["gpu"]["device"] = device_status().props.name;
    for (std::size_t i = 0; i < queries.size(); ++i) {
      auto& j = out[slot[i]];
      j["results"] = results_json(hits[i]);
      if (also_cpu) add_cpu(j, queries[i], &hits[i]);
    }
  } else {
    for (std::size_t i = 0; i < queries.size(); ++i) add_cpu(out[slot[i]], queries[i], nullptr);
    summary["cpu"] = {{"total_ms", ms_since(t0)}};
  }
  summary["wall_ms"] = ms_since(t0);
  summary["queries_per_s"] = queries.empty() ? 0.0 : queries.size() / (ms_since(t0) / 1000.0);
  for (const auto& j : out) {
    if (j.contains("error"))
      std::fprintf(stderr, "distancies: error: line %d: %s\n", j["line"].get<int>(), j["error"].get<std::string>().c_str());
    if (o_.json || !j.contains("error")) print(j);
  }
  print_summary(summary);
  return static_cast<int>(lines.size() - queries.size());
}

void Session::print(const nlohmann::json& j) const {
  if (o_.json) {
    std::cout << j.dump() << std::endl;
    return;
  }
  std::printf("%s\n", j["query"].get<std::string>().c_str());
  for (const auto& r : j["results"])
    std::printf("%4d  %-24s %.6f\n", r["rank"].get<int>(), r["word"].get<std::string>().c_str(),
                r["similarity"].get<double>());
  if (j.contains("gpu")) print_timing("gpu", j["gpu"]);
  if (j.contains("cpu")) {
    std::printf("  cpu sequential: %.3f ms", j["cpu"]["total_ms"].get<double>());
    if (j["cpu"].contains("same_rows_as_gpu"))
      std::printf(" (%s)", j["cpu"]["same_rows_as_gpu"].get<bool>() ? "same rows as the gpu" : "rows differ from the gpu: near-ties");
    std::printf("\n");
  }
  std::fflush(stdout);
}

void Session::print_summary(const nlohmann::json& s) const {
  if (o_.json) {
    std::cout << nlohmann::json{{"summary", s}}.dump() << std::endl;
    return;
  }
  std::printf("batch: %d queries, %d answered, %d failed, %.0f queries/s\n", s["queries"].get<int>(),
              s["answered"].get<int>(), s["failed"].get<int>(), s["queries_per_s"].get<double>());
  if (s.contains("gpu")) {
    print_timing("gpu", s["gpu"]);
    if (s.contains("sub_batch"))
      std::printf("  sub-batches of %d, %d queries redone by the fallback\n", s["sub_batch"].get<int>(),
                  s["fallbacks"].get<int>());
  }
  if (s.contains("cpu")) std::printf("  cpu sequential: %.3f ms\n", s["cpu"]["total_ms"].get<double>());
  std::fflush(stdout);
}

}  // namespace distancies::cli
