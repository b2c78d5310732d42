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
  bool replicate = false;            // --gpus: every rank holds every row (a large batch splits its queries)
};

// Every study's subcommands, in the order of cmake/studies.cmake (generated from the studies'
// folders: harness/<study>/<study>_commands.cpp defines add_<study>_commands).
void add_study_commands(CLI::App& app);

// The embeddings study's (its registrar, harness/embeddings/embeddings_commands.cpp, calls them):
void add_model_commands(CLI::App& app);   // info, convert, gen
void add_search_commands(CLI::App& app);  // query, repl, device, list

}  // namespace distancies::cli
