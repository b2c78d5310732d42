// The `distancies` subcommands; each returns the process exit code.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace distancies::cli {

struct SearchOptions {
  std::string model;
  int k = 10;
  std::string device = "auto";  // auto | gpu | cpu
  std::string variant = "auto";  // a pipeline or batch pipeline name, or auto (variants/embeddings/auto_plan.hpp)
  bool also_cpu = false;
  bool keep_query_words = false;
  bool pageable = false;
  bool json = false;
  std::string format = "auto";
  bool timings = false;  // a line on where the load's time went, against its floors
};

void add_model_commands(CLI::App& app);   // info, convert, gen
void add_search_commands(CLI::App& app);  // query, repl
void add_moments_command(CLI::App& app);  // moments
void add_intersect_commands(CLI::App& app);  // intersect, intersect-gen (intersect_commands.cpp)

}  // namespace distancies::cli
