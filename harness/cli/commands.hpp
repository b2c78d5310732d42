// The `distancies` subcommands; each returns the process exit code.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace distancies::cli {

struct SearchOptions {
  std::string model;
  int k = 10;
  std::string device = "auto";   // auto | gpu | cpu
  std::string variant = "auto";  // a pipeline or batch pipeline name, or auto (variants/embeddings/auto_plan.hpp)
  bool also_cpu = false;
  bool keep_query_words = false;
  bool pageable = false;
  bool json = false;
  std::string format = "auto";
  bool timings = false;  // a line on where the load's time went, against its floors
  // Beyond one GPU's memory (docs/scale.md): stream the model from page-locked host memory.
  bool stream = false;
  std::size_t gpu_memory_limit = 0;  // bytes (0: the card's); a model larger than this streams
  std::int64_t chunk_rows = 0;       // forced chunk size (0: the policy's)
  int gpus = 0;                      // shard over this many GPUs, one process each (0: not sharded)
};

void add_model_commands(CLI::App& app);      // info, convert, gen
void add_search_commands(CLI::App& app);     // query, repl
void add_moments_command(CLI::App& app);     // moments
void add_intersect_commands(CLI::App& app);  // intersect, intersect-gen (intersect_commands.cpp)

}  // namespace distancies::cli
