// Search commands: `query` (one word or expression) and `repl` (the study's stdin protocol).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "harness/cli/commands.hpp"
#include "harness/cpu_search.hpp"
#include "harness/device_model.hpp"
#include "harness/error.hpp"
#include "harness/expression.hpp"
#include "harness/formats.hpp"
#include "harness/gpu_search.hpp"

namespace distancies::cli {
namespace {

using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// A loaded model, on the GPU too when one is used.
class Session {
 public:
  explicit Session(const SearchOptions& o) : o_(o) {
    if (o.k < 1) throw Error("-k must be at least 1");
    if (o.device != "auto" && o.device != "gpu" && o.device != "cpu")
      throw Error("--device must be gpu, cpu or auto, not '" + o.device + "'");
    pipe_ = &pipeline(o.variant);  // an unknown name fails before the model loads
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

  // Runs one query and prints it; `also_cpu` adds the study's sequential CPU search.
  void run(const std::string& text, bool also_cpu) {
    const Query q = make_query(model_, text);
    nlohmann::json j = {{"query", text}, {"k", o_.k}};
    std::vector<Hit> hits;
    if (use_gpu_) {
      Breakdown bd;
      hits = gpu_->search(*pipe_, q, o_.k, o_.keep_query_words, &bd);
      nlohmann::json stages = nlohmann::json::object();
      for (const auto& s : bd.stages) stages[s.name] = s.ms;
      j["gpu"] = {{"pipeline", pipe_->name},
                  {"device", device_status().props.name},
                  {"total_ms", bd.total_ms},
                  {"wall_ms", bd.wall_ms},
                  {"kernel_ms", bd.kernel_ms()},
                  {"transfer_ms", bd.transfer_ms()},
                  {"overhead_ms", bd.overhead_ms()},
                  {"stages_ms", stages}};
    }
    std::vector<Hit> cpu_hits;
    if (!use_gpu_ || also_cpu) {
      const auto t0 = clock_type::now();
      const auto exclude = o_.keep_query_words ? std::vector<std::int32_t>{} : q.word_rows;
      cpu_hits = sequential_search(model_, q.vector.data(), q.norm, o_.k, exclude);
      j["cpu"] = {{"total_ms", ms_since(t0)}};
      if (!use_gpu_) hits = cpu_hits;
    }
    j["results"] = nlohmann::json::array();
    for (std::size_t i = 0; i < hits.size(); ++i)
      j["results"].push_back({{"rank", i + 1}, {"word", model_.words[hits[i].row]}, {"row", hits[i].row},
                              {"similarity", hits[i].sim}});
    if (use_gpu_ && also_cpu) {
      bool same = cpu_hits.size() == hits.size();
      for (std::size_t i = 0; same && i < hits.size(); ++i) same = cpu_hits[i].row == hits[i].row;
      j["cpu"]["same_rows_as_gpu"] = same;
    }
    print(j);
  }

 private:
  void print(const nlohmann::json& j) const {
    if (o_.json) {
      std::cout << j.dump() << std::endl;
      return;
    }
    std::printf("%s\n", j["query"].get<std::string>().c_str());
    for (const auto& r : j["results"])
      std::printf("%4d  %-24s %.6f\n", r["rank"].get<int>(), r["word"].get<std::string>().c_str(),
                  r["similarity"].get<double>());
    if (j.contains("gpu")) {
      const auto& g = j["gpu"];
      std::printf("  gpu %s: %.3f ms (kernels %.3f, transfers %.3f, overhead %.3f;", g["pipeline"].get<std::string>().c_str(),
                  g["total_ms"].get<double>(), g["kernel_ms"].get<double>(), g["transfer_ms"].get<double>(),
                  g["overhead_ms"].get<double>());
      for (const auto& [name, ms] : g["stages_ms"].items()) std::printf(" %s %.3f", name.c_str(), ms.get<double>());
      std::printf(")\n");
    }
    if (j.contains("cpu")) {
      std::printf("  cpu sequential: %.3f ms", j["cpu"]["total_ms"].get<double>());
      if (j["cpu"].contains("same_rows_as_gpu"))
        std::printf(" (%s)", j["cpu"]["same_rows_as_gpu"].get<bool>() ? "same rows as the gpu" : "rows differ from the gpu: near-ties");
      std::printf("\n");
    }
    std::fflush(stdout);
  }

  SearchOptions o_;
  Model model_;
  const Pipeline* pipe_ = nullptr;
  bool use_gpu_ = false;
  std::unique_ptr<DeviceModel> dm_;
  std::unique_ptr<GpuSearcher> gpu_;
};

void add_search_options(CLI::App* c, SearchOptions& o) {
  c->add_option("--model,-m", o.model, "Model file (any readable format; native loads fastest)")->required();
  c->add_option("-k", o.k, "How many results")->check(CLI::Range(1, 1 << 20));
  c->add_option("--device", o.device, "gpu, cpu, or auto (the GPU when there is one)")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}));
  c->add_option("--variant", o.variant, "GPU pipeline (see `distancies list`)");
  c->add_flag("--keep-query-words", o.keep_query_words, "Keep the query's own words in the results (the study did)");
  c->add_flag("--pageable", o.pageable, "Pageable host memory instead of pinned (the study's V2 switch)");
  c->add_flag("--json", o.json, "One JSON object per query");
  c->add_option("--format", o.format, "Model format: auto, glove, study-text, study-split, word2vec, native");
}

// The study's protocol: `WORD FLAG` or `EXPR ! FLAG`, FLAG 1 = also on the CPU.
bool split_flag(std::string line, std::string& text, bool& cpu) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  std::size_t s = line.find_first_not_of(" \t");
  if (s == std::string::npos) return false;
  line = line.substr(s);
  cpu = false;
  const std::size_t sp = line.find_last_of(" \t");
  if (sp != std::string::npos) {
    const std::string last = line.substr(sp + 1);
    if (last == "0" || last == "1") {
      cpu = last == "1";
      line.erase(sp);
    }
  }
  text = line;
  return true;
}

}  // namespace

void add_search_commands(CLI::App& app) {
  {
    auto o = std::make_shared<SearchOptions>();
    auto words = std::make_shared<std::vector<std::string>>();
    auto* c = app.add_subcommand("query", "Top k words for a word or an expression such as 'king - man + woman'");
    add_search_options(c, *o);
    c->add_flag("--cpu", o->also_cpu, "Also run the study's sequential CPU search and report both times");
    c->add_option("expression", *words, "A word, or words joined by + and - (quote words with spaces)")->required();
    c->callback([=] {
      std::string text;
      for (const auto& w : *words) text += (text.empty() ? "" : " ") + (w.find(' ') != std::string::npos ? '"' + w + '"' : w);
      Session s(*o);
      s.run(text, o->also_cpu);
    });
  }
  {
    auto o = std::make_shared<SearchOptions>();
    auto* c = app.add_subcommand("repl", "Read the study's protocol from stdin: 'bottle 0', 'snake 1', 'king - queen ! 0'");
    add_search_options(c, *o);
    c->callback([=] {
      Session s(*o);
      std::string line, text;
      bool cpu = false;
      int failed = 0;
      while (std::getline(std::cin, line)) {
        if (!split_flag(line, text, cpu)) continue;
        try {
          s.run(text, cpu);
        } catch (const Error& e) {
          ++failed;
          std::fprintf(stderr, "distancies: error: %s\n", e.what());
        }
      }
      if (failed) throw Error(std::to_string(failed) + " quer" + (failed == 1 ? "y" : "ies") + " failed");
    });
  }
  {
    auto* c = app.add_subcommand("device", "Say which GPU would be used, or why none can be (exit 1 when none)");
    c->callback([] {
      const DeviceStatus& d = device_status();
      std::printf("%s\n", describe_device(d).c_str());
      if (!d.available) throw Error("no usable CUDA GPU: GPU searches, GPU tests and GPU fixtures cannot run here");
    });
  }
  {
    auto* c = app.add_subcommand("list", "List the registered dot variants, top-k stages and pipelines");
    c->callback([] {
      std::printf("dot variants:\n");
      for (const auto& d : dot_variants()) std::printf("  %-20s %-18s %s\n", d.name, d.origin, d.description);
      std::printf("top-k stages:\n");
      for (const auto& t : topk_stages()) std::printf("  %-20s %-18s %s\n", t.name, t.origin, t.description);
      std::printf("pipelines:\n");
      for (const auto& p : pipelines()) std::printf("  %-20s %-18s %s\n", p.name, p.origin, p.description);
    });
  }
}

}  // namespace distancies::cli
