// `distancies moments`: per-dimension mean, variance, skewness and kurtosis of a model.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "harness/cli/commands.hpp"
#include "harness/formats.hpp"
#include "harness/moments/model_moments.hpp"
#include "runtime/device.hpp"
#include "variants/moments/registry.hpp"

namespace distancies::cli {
namespace {

struct MomentsOptions {
  std::string model, format = "auto", device = "auto", variant = kDefaultMomentsVariant;
  bool unbiased = false, pearson = false, json = false;
  int top = 5;
};

void run_moments_command(const MomentsOptions& o) {
  LoadOptions lo;
  lo.format = parse_format(o.format);
  const Model m = load_model(o.model, lo);
  if (o.device == "auto" && !device_status().available)
    std::fprintf(stderr, "distancies: no usable CUDA GPU (%s): computing on the CPU (fp64 oracle)\n",
                 device_status().reason.c_str());
  const MomentEstimator e{o.unbiased, !o.pearson};
  const ModelMoments r = model_moments(m, o.device, o.variant, e);
  const int top = std::min<int>(o.top, m.dim);
  if (o.json) {
    nlohmann::json j = {{"model", o.model},
                        {"rows", m.rows},
                        {"dim", m.dim},
                        {"device", r.device},
                        {"variant", r.variant},
                        {"ms", r.ms},
                        {"estimator",
                         {{"unbiased", e.unbiased},
                          {"fisher", e.fisher},
                          {"name", estimator_name(e)},
                          {"same_as", estimator_scipy(e)}}},
                        {"mean", r.stats.mean},
                        {"variance", r.stats.variance},
                        {"skewness", r.stats.skewness},
                        {"kurtosis", r.stats.kurtosis}};
    nlohmann::json largest = nlohmann::json::array();
    for (int i = 0; i < top; ++i)
      largest.push_back({{"dim", r.by_skewness[i]}, {"skewness", r.stats.skewness[r.by_skewness[i]]}});
    j["summary"] = {{"mean_norm", r.mean_norm}, {"largest_abs_skewness", largest}};
    std::cout << j.dump() << "\n";  // NaN (constant dimensions) prints as null
    return;
  }
  std::printf("model      %s: %lld rows x %d dims\n", o.model.c_str(), static_cast<long long>(m.rows), m.dim);
  std::printf("computed   %s %s in %.2f ms; estimators %s (%s)\n", r.device.c_str(), r.variant.c_str(), r.ms,
              estimator_name(e).c_str(), estimator_scipy(e).c_str());
  std::printf("%5s %14s %14s %12s %12s\n", "dim", "mean", "variance", "skewness", e.fisher ? "kurtosis-3" : "kurtosis");
  for (int c = 0; c < m.dim; ++c)
    std::printf("%5d %14.6g %14.6g %12.5g %12.5g\n", c, r.stats.mean[c], r.stats.variance[c], r.stats.skewness[c],
                r.stats.kurtosis[c]);
  std::printf("norm of the mean vector: %.6g\nlargest |skewness|:", r.mean_norm);
  for (int i = 0; i < top; ++i)
    std::printf("%s dim %d (%.4g)", i ? "," : "", r.by_skewness[i], r.stats.skewness[r.by_skewness[i]]);
  std::printf("\n");
}

}  // namespace

void add_moments_commands(CLI::App& app) {
  auto o = std::make_shared<MomentsOptions>();
  auto* c = app.add_subcommand("moments", "Per-dimension mean, variance, skewness and kurtosis of a model (GPU)");
  c->add_option("--model,-m,model", o->model, "Model file (any readable format)")->required();
  c->add_option("--format", o->format, "Model format: auto, glove, study-text, study-split, word2vec, native");
  c->add_option("--device", o->device, "gpu, cpu (fp64 oracle), or auto (the GPU when there is one, else the CPU)")
      ->check(CLI::IsMember({"auto", "gpu", "cpu"}));
  c->add_option("--variant", o->variant, "GPU moments variant (docs/moments.md; default one_pass)");
  c->add_flag("--unbiased", o->unbiased, "Unbiased estimators: variance /(n-1), G1, G2 (SciPy bias=False)");
  c->add_flag("--pearson", o->pearson, "Pearson kurtosis (normal = 3) instead of Fisher's excess (normal = 0)");
  c->add_option("--top", o->top, "How many dimensions of largest |skewness| the summary names")
      ->check(CLI::Range(0, 1 << 20));
  c->add_flag("--json", o->json, "One JSON object");
  c->callback([o] { run_moments_command(*o); });
}

}  // namespace distancies::cli
