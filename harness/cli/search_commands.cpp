// Search commands: `query` (one word or expression, or a batch file) and `repl` (the study's
// stdin protocol, plus batches).
#include <cstdio>
#include <iostream>
#include <memory>

#include "harness/cli/commands.hpp"
#include "harness/cli/repl.hpp"
#include "harness/cli/session.hpp"
#include "harness/registry_report.hpp"
#include "runtime/error.hpp"
#include "variants/embeddings/policy.hpp"

namespace distancies::cli {
namespace {

void add_search_options(CLI::App* c, SearchOptions& o) {
  c->add_option("--model,-m", o.model, "Model file (any readable format; native loads fastest)")->required();
  c->add_option("-k", o.k, "How many results")->check(CLI::Range(1, 1 << 20));
  c->add_option("--device", o.device, "gpu, cpu, or auto (the GPU when there is one)")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}));
  c->add_option("--variant", o.variant,
                "GPU pipeline or batch pipeline (see `distancies list`), or auto: the fastest exact one for the "
                "work at hand (default)");
  c->add_flag("--timings", o.timings,
              "Say where loading went (read, copy) against its floors: a plain sequential read of the file and a "
              "pinned host-to-device copy (measured after the load, so it adds their time)");
  c->add_flag("--keep-query-words", o.keep_query_words, "Keep the query's own words in the results (the study did)");
  c->add_flag("--pageable", o.pageable, "Pageable host memory instead of pinned (the study's V2 switch)");
  c->add_flag("--json", o.json, "One JSON object per query");
  c->add_option("--format", o.format, "Model format: auto, glove, study-text, study-split, word2vec, native");
  c->add_flag("--stream", o.stream,
              "Keep the model in page-locked host memory and stream it to the GPU in chunks (also chosen by itself "
              "when the model does not fit the GPU)");
  c->add_option("--gpu-memory-limit", o.gpu_memory_limit,
                "Bytes of GPU memory the search may use (suffixes k, M, G: powers of 1024); a larger model streams")
      ->transform(CLI::AsSizeValue(false));
  c->add_option("--chunk-rows", o.chunk_rows, "Rows per streamed chunk (default: the policy's, within the memory)")
      ->check(CLI::Range(std::int64_t(1), std::int64_t(1) << 31));
  c->add_option("--gpus", o.gpus,
                "Shard the model over N GPUs, one process each over NCCL: start N processes with "
                "scripts/shard_launch.sh N (--gpus 1 runs the same path in this process)")
      ->check(CLI::Range(1, 1024));
  c->add_flag("--replicate", o.replicate,
              "With --gpus: every rank holds the whole model, and a batch of 512 queries or more is split by queries "
              "instead of rows (faster where the model fits every GPU)");
}

}  // namespace

void add_search_commands(CLI::App& app) {
  {
    auto o = std::make_shared<SearchOptions>();
    auto words = std::make_shared<std::vector<std::string>>();
    auto* c = app.add_subcommand("query", "Top k words for a word or an expression such as 'king - man + woman'");
    add_search_options(c, *o);
    c->add_flag("--cpu", o->also_cpu, "Also run the study's sequential CPU search and report both times");
    auto batch = std::make_shared<std::string>();
    auto* expr = c->add_option("expression", *words, "A word, or words joined by + and - (quote words with spaces)");
    auto* file = c->add_option("--batch", *batch, "Answer every line of FILE (a word or expression each) as one batch");
    expr->excludes(file);
    c->callback([=] {
      if (batch->empty() && words->empty()) throw Error("give a word or expression, or --batch FILE");
      if (!batch->empty()) {
        const auto lines = read_batch_file(*batch);  // a missing file fails before the model loads
        Session s(*o);
        const int failed = s.run_batch(lines, o->also_cpu);
        if (failed)
          throw Error(std::to_string(failed) + " of " + std::to_string(s.last_batch_queries()) + " queries failed");
        return;
      }
      // One argument is the text as typed ("king - man + woman", "-", "#": an expression unless
      // that exact string is a word); among several, an argument with spaces is one word.
      std::string text = words->size() == 1 ? words->front() : std::string();
      if (words->size() > 1)
        for (const auto& w : *words)
          text += (text.empty() ? "" : " ") + (w.find(' ') != std::string::npos ? '"' + w + '"' : w);
      Session s(*o);
      s.run(text, o->also_cpu);
    });
  }
  {
    auto o = std::make_shared<SearchOptions>();
    auto* c = app.add_subcommand("repl",
                                 "Read the study's protocol from stdin: 'bottle 0', 'snake 1', 'king - queen ! 0'; "
                                 "':batch FILE', or lines between ':begin' and ':end', run as one batch");
    add_search_options(c, *o);
    c->callback([=] {
      Session s(*o);
      ReplActions act;
      act.query = [&](const std::string& text, bool cpu) { s.run(text, cpu); };
      act.batch = [&](const std::vector<BatchLine>& block) { return s.run_batch(block, false); };
      act.batch_file = [&](const std::string& path) { return s.run_batch(read_batch_file(path), false); };
      act.is_word = [&](std::string_view w) { return s.is_word(w); };
      const int failed = run_repl(std::cin, act);
      if (failed) throw Error(std::to_string(failed) + " quer" + (failed == 1 ? "y" : "ies") + " failed");
    });
  }
  {
    auto* c = app.add_subcommand("device", "Say which GPU would be used, or why none can be (exit 1 when none)");
    c->callback([] {
      const DeviceStatus& d = device_status();
      std::printf("%s\n", describe_device(d).c_str());
      if (d.available) std::printf("pipelines run the %s\n", policy::policy_for(d.props.major, d.props.minor).c_str());
      if (!d.available) throw Error("no usable CUDA GPU: GPU searches, GPU tests and GPU fixtures cannot run here");
    });
  }
  {
    auto* c = app.add_subcommand("list", "List every registered row of every study: variants, stages, pipelines");
    static bool json = false;
    c->add_flag("--json", json, "One JSON object: study -> family -> rows");
    c->callback([] { std::fputs((json ? registry_json().dump(2) + "\n" : describe_registry()).c_str(), stdout); });
  }
}

}  // namespace distancies::cli
