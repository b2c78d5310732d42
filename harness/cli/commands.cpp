// Model commands: info, convert, gen.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/cli/commands.hpp"
#include "harness/formats.hpp"
#include "harness/synthetic.hpp"
#include "runtime/error.hpp"

namespace distancies::cli {
namespace {

// A one-line progress bar on stderr, redrawn at most every percent.
Progress progress_bar(const char* what) {
  if (!isatty(STDERR_FILENO)) return {};
  auto last = std::make_shared<int>(-1);
  return [what, last](std::uint64_t done, std::uint64_t total) {
    const int pct = total ? static_cast<int>(100.0 * done / total) : 100;
    if (pct == *last) return;
    *last = pct;
    std::fprintf(stderr, "\r%s %3d%% [%-40.*s]", what, pct, pct * 40 / 100, "########################################");
    if (pct >= 100) std::fprintf(stderr, "\n");
  };
}

void run_info(const std::string& path, const std::string& format, bool as_json) {
  LoadOptions opt;
  opt.format = parse_format(format);
  LoadReport rep;
  const auto t0 = std::chrono::steady_clock::now();
  Model m = load_model(path, opt, &rep);
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  float nmin = m.rows ? m.norms[0] : 0, nmax = nmin;
  for (float n : m.norms) {
    nmin = std::min(nmin, n);
    nmax = std::max(nmax, n);
  }
  nlohmann::json j = {{"path", path},
                      {"format", m.format},
                      {"rows", m.rows},
                      {"dim", m.dim},
                      {"ld", m.ld},
                      {"normalized", m.normalized},
                      {"bytes_vectors", static_cast<double>(m.rows) * m.ld * 4},
                      {"zero_vectors", rep.zero_vectors},
                      {"norm_min", nmin},
                      {"norm_max", nmax},
                      {"first_word", m.rows ? m.words.front() : ""},
                      {"last_word", m.rows ? m.words.back() : ""},
                      {"load_ms", load_ms}};
  if (as_json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf("model       %s\nformat      %s\nshape       %lld rows x %d dims (row stride %d floats)\n", path.c_str(),
              m.format.c_str(), static_cast<long long>(m.rows), m.dim, m.ld);
  std::printf("vectors     %.2f GiB as float32%s\n", m.rows * double(m.ld) * 4 / double(1 << 30),
              m.normalized ? ", stored normalised" : "");
  std::printf("checks      sorted, unique, finite; %lld zero vectors; norms in [%g, %g]\n",
              static_cast<long long>(rep.zero_vectors), nmin, nmax);
  if (m.rows) std::printf("vocabulary  '%s' .. '%s'\n", m.words.front().c_str(), m.words.back().c_str());
  std::printf("loaded in   %.1f ms\n", load_ms);
}

}  // namespace

void add_model_commands(CLI::App& app) {
  {
    auto* c = app.add_subcommand("info", "Print a model's shape, format and checks");
    auto model = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("auto");
    auto json = std::make_shared<bool>(false);
    c->add_option("--model,model", *model, "Model file")->required();
    c->add_option("--format", *format, "Input format: auto, glove, study-text, study-split, word2vec, native");
    c->add_flag("--json", *json, "Print JSON");
    c->callback([=] { run_info(*model, *format, *json); });
  }
  {
    auto* c = app.add_subcommand("convert", "Write any readable model in the native format");
    auto in = std::make_shared<std::string>();
    auto out = std::make_shared<std::string>();
    auto format = std::make_shared<std::string>("auto");
    auto skip = std::make_shared<bool>(false);
    auto no_zero = std::make_shared<bool>(false);
    c->add_option("in", *in, "Input model")->required();
    c->add_option("out", *out, "Output file (native format)")->required();
    c->add_option("--format", *format, "Input format: auto, glove, study-text, study-split, word2vec, native");
    c->add_flag("--skip-bad-rows", *skip, "Skip rows with NaN/Inf values or duplicated words (and count them)");
    c->add_flag("--reject-zero-vectors", *no_zero, "Treat all-zero rows as bad rows");
    c->callback([=] {
      LoadOptions opt;
      opt.format = parse_format(*format);
      opt.skip_bad_rows = *skip;
      opt.allow_zero_vectors = !*no_zero;
      opt.progress = progress_bar("reading");
      LoadReport rep;
      Model m = load_model(*in, opt, &rep);
      save_native(m, *out);
      std::printf("wrote %s: %lld rows x %d dims (from %s)\n", out->c_str(), static_cast<long long>(m.rows), m.dim,
                  m.format.c_str());
      std::printf("skipped: %lld non-finite, %lld duplicated, %lld empty words; zero vectors: %lld\n",
                  static_cast<long long>(rep.skipped_nonfinite), static_cast<long long>(rep.skipped_duplicates),
                  static_cast<long long>(rep.skipped_empty_words), static_cast<long long>(rep.zero_vectors));
    });
  }
  {
    auto* c = app.add_subcommand("gen", "Write a deterministic synthetic model (default: GloVe 840B's shape)");
    auto out = std::make_shared<std::string>();
    auto rows = std::make_shared<long long>(kGloveRows);
    auto dim = std::make_shared<int>(kGloveDim);
    auto seed = std::make_shared<unsigned long long>(kDefaultSeed);
    c->add_option("out", *out, "Output file (native format)")->required();
    c->add_option("--rows", *rows, "Rows (words)")->check(CLI::Range(10LL, 2147483647LL));
    c->add_option("--dim", *dim, "Dimensions")->check(CLI::Range(1, 12288));
    auto family = std::make_shared<std::string>("iid");
    c->add_option("--seed", *seed, "Seed");
    c->add_option("--family", *family, "Data family: iid, aniso:C, dirs:C, clustered, heavy (docs/data.md)")
        ->capture_default_str();
    c->callback([=] {
      const DataFamily f = make_family(*family, *dim);
      Model m = make_synthetic_model(*rows, *dim, *seed, f);
      save_native(m, *out);
      std::printf("wrote %s: %lld rows x %d dims, seed %llu, family %s\n", out->c_str(), *rows, *dim, *seed,
                  family_name(f).c_str());
    });
  }
}

}  // namespace distancies::cli
