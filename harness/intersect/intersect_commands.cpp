// The posting-list study's commands: `intersect` (run a variant, or all of them, over an index
// and a query file) and `intersect-gen` (write the study's small set or a GOV2-shaped one).
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "harness/cli/commands.hpp"
#include "harness/intersect/generate.hpp"
#include "harness/intersect/gpu_intersect.hpp"
#include "harness/intersect/index.hpp"
#include "runtime/device.hpp"
#include "runtime/error.hpp"
#include "variants/intersect/cpu_intersect.hpp"
#include "variants/intersect/cpu_peers.hpp"
#include "variants/intersect/intersect_registry.hpp"

namespace distancies::cli {
namespace {

using namespace intersect;
using Answers = std::vector<std::vector<std::uint32_t>>;

struct IntersectOptions {
  std::string index, queries, algorithm = "auto", memory = "explicit";
  bool ids = false, json = false, check = false;
};

// Runs one variant; returns the answers and the milliseconds the run took (a GPU run timed
// with events, a CPU peer with the host clock, each after one untimed run, so first-touch costs
// are not counted; a peer's preparation, like the index's upload, is not timed).
Answers run_variant(const IntersectVariant& v, const PostingIndex& ix, const HashTables& h,
                    const std::vector<Query>& qs, GpuBatch* batch, double* ms) {
  if (v.peer) {
    const std::unique_ptr<CpuPeer> peer = v.peer(ix, 0);
    peer->run(qs);
    const auto t0 = std::chrono::steady_clock::now();
    Answers a = peer->run(qs);
    *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return a;
  }
  if (v.serial) {
    Answers a;
    const auto t0 = std::chrono::steady_clock::now();
    for (const Query& q : qs) a.push_back(v.serial(lists_of(ix, q), terms_by_length(ix, q), h));
    *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return a;
  }
  batch->run(v, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  Event a, b;
  a.record(nullptr);
  batch->run(v, nullptr);
  b.record(nullptr);
  *ms = elapsed_ms(a, b);
  return batch->answers();
}

void print_text(const IntersectVariant& v, const std::vector<Query>& qs, const Answers& ans, double ms, bool ids,
                std::uint64_t bytes) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < qs.size(); ++i) {
    total += ans[i].size();
    std::printf("line %d:", qs[i].line);
    for (std::uint32_t t : qs[i].terms) std::printf(" %u", t);
    std::printf(" -> %zu ids", ans[i].size());
    if (ids) {
      std::printf(":");
      for (std::uint32_t id : ans[i]) std::printf(" %u", id);
    }
    std::printf("\n");
  }
  std::printf("%s: %zu queries, %zu ids found, %.3f ms (%.0f queries/s, %.2f GB/s over %.1f MB of touched lists)\n",
              v.name, qs.size(), total, ms, ms > 0 ? qs.size() / (ms / 1e3) : 0.0,
              ms > 0 ? bytes / (ms / 1e3) / 1e9 : 0.0, bytes / 1e6);
}

void run_intersect(const IntersectOptions& o) {
  IndexReport irep;
  const PostingIndex ix = read_index(o.index, &irep);
  QueryReport qrep;
  const std::vector<Query> qs = read_queries(o.queries, ix.lists(), &qrep);
  if (!o.json) {
    std::fprintf(stderr, "index %s: %zu lists (%zu empty), %zu ids, mean length %.1f, max id %u\n", o.index.c_str(),
                 ix.lists(), irep.empty_lists, ix.ids.size(), ix.mean_length(), ix.max_id);
    std::fprintf(stderr, "queries %s: %zu (%zu blank lines skipped)\n", o.queries.c_str(), qs.size(), qrep.blank_lines);
  }
  const bool gpu = device_status().available;
  std::vector<const IntersectVariant*> run;
  if (o.algorithm == "all") {
    for (const IntersectVariant& v : intersect_variants()) {
      if (v.method == IntersectMethod::Roaring && !roaring_built()) {
        if (!o.json) std::fprintf(stderr, "%s: not built (libroaring-dev missing at configure time)\n", v.name);
        continue;
      }
      if (v.serial || v.peer || gpu) run.push_back(&v);
    }
    if (!gpu && !o.json)
      std::fprintf(stderr, "no usable CUDA GPU (%s): running the CPU variants only\n", device_status().reason.c_str());
  } else {
    run.push_back(
        &intersect_variant(o.algorithm == "auto" ? (gpu ? "probe_coarse_batch" : "svs_serial") : o.algorithm));
  }
  const HashTables h = build_hash_tables(ix);
  std::unique_ptr<GpuIndex> gi;
  std::unique_ptr<GpuBatch> batch;
  std::uint64_t bytes = 0;
  for (const Query& q : qs) bytes += touched_bytes(ix, q);
  Answers want;
  if (o.check)
    for (const Query& q : qs) want.push_back(oracle_intersect(lists_of(ix, q)));
  nlohmann::json runs = nlohmann::json::array();
  int mismatches = 0;
  std::string first_wrong;
  for (const IntersectVariant* v : run) {
    if (v->mark && !batch) {
      gi = std::make_unique<GpuIndex>(ix, o.memory == "managed" ? IndexMemory::Managed : IndexMemory::Explicit);
      batch = std::make_unique<GpuBatch>(*gi, qs);
    }
    double ms = 0;
    const Answers ans = run_variant(*v, ix, h, qs, batch.get(), &ms);
    int wrong = 0;
    if (o.check)
      for (std::size_t i = 0; i < qs.size(); ++i)
        if (ans[i] != want[i]) {
          if (wrong++ == 0 && first_wrong.empty())
            first_wrong = std::string(v->name) + " at line " + std::to_string(qs[i].line) + ": " +
                          std::to_string(ans[i].size()) + " ids, the oracle has " + std::to_string(want[i].size());
        }
    mismatches += wrong;
    if (o.json) {
      nlohmann::json qj = nlohmann::json::array();
      for (std::size_t i = 0; i < qs.size(); ++i) {
        nlohmann::json e = {{"line", qs[i].line}, {"terms", qs[i].terms}, {"count", ans[i].size()}};
        if (o.ids) e["ids"] = ans[i];
        qj.push_back(std::move(e));
      }
      runs.push_back({{"algorithm", v->name}, {"ms", ms}, {"touched_bytes", bytes}, {"queries", std::move(qj)}});
      if (o.check) runs.back()["mismatches"] = wrong;
    } else {
      print_text(*v, qs, ans, ms, o.ids, bytes);
    }
  }
  if (o.json) std::cout << nlohmann::json({{"index", o.index}, {"runs", runs}}).dump() << "\n";
  if (o.check) {
    if (mismatches)
      throw Error(std::to_string(mismatches) + " answers differ from the oracle (first: " + first_wrong + ")");
    if (!o.json) std::printf("every answer matches the oracle (%zu variants x %zu queries)\n", run.size(), qs.size());
  }
}

}  // namespace

void add_intersect_commands(CLI::App& app) {
  {
    auto o = std::make_shared<IntersectOptions>();
    auto* c = app.add_subcommand("intersect", "Intersect the posting lists of each query (the study's index format)");
    c->add_option("--index", o->index, "Binary index: little-endian uint32 [len][ids...] per list")->required();
    c->add_option("--queries", o->queries, "Query file: up to 5 term ids per line")->required();
    c->add_option("--algorithm", o->algorithm,
                  "A variant of `distancies list` (intersect family), 'all', or 'auto' (probe_coarse_batch, the "
                  "fastest batch on every committed set, on a GPU; "
                  "else svs_serial); the *_allcores peers use every hardware thread");
    c->add_option("--memory", o->memory, "The index in explicit device memory or managed memory")
        ->check(CLI::IsMember({"explicit", "managed"}));
    c->add_flag("--ids", o->ids, "Print each query's ids, not only their count");
    c->add_flag("--json", o->json, "One JSON object");
    c->add_flag("--check", o->check, "Compare every answer with the oracle (chained std::set_intersection)");
    c->callback([o] { run_intersect(*o); });
  }
  {
    auto set = std::make_shared<std::string>("small");
    auto index = std::make_shared<std::string>(), queries = std::make_shared<std::string>();
    auto seed = std::make_shared<std::uint64_t>(kDefaultSeed);
    auto lists = std::make_shared<std::size_t>(Gov2Shape{}.lists);
    auto* c = app.add_subcommand("intersect-gen", "Write the study's small set or a GOV2-shaped index and queries");
    c->add_option("--set", *set,
                  "small (1,000 lists of 50-100 ids, 300 queries of 5 terms) or gov2 (Zipf lengths, "
                  "mean 19,899.4, ids to 25,205,174, 1,000 queries of 2-5 terms)")
        ->check(CLI::IsMember({"small", "gov2"}));
    c->add_option("--index", *index, "Index file to write")->required();
    c->add_option("--queries", *queries, "Query file to write")->required();
    c->add_option("--seed", *seed, "Generator seed (std::mt19937_64)");
    c->add_option("--lists", *lists, "gov2: number of lists")->check(CLI::Range(5, 1000000));
    c->callback([=] {
      Gov2Shape g;
      g.lists = *lists;
      const DataSet d = *set == "small" ? small_set(*seed) : gov2_shaped(g, *seed);
      write_index(*index, d.index);
      write_queries(*queries, d.queries);
      std::printf("%s: %zu lists, %zu ids (mean %.1f, max id %u); %s: %zu queries (seed %llu)\n", index->c_str(),
                  d.index.lists(), d.index.ids.size(), d.index.mean_length(), d.index.max_id, queries->c_str(),
                  d.queries.size(), static_cast<unsigned long long>(*seed));
    });
  }
}

}  // namespace distancies::cli
