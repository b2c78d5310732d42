// The trivial study's subcommand registrar.
#include <cstdio>

#include <CLI/CLI.hpp>

namespace distancies::cli {

void add_trivial_commands(CLI::App& app);
void add_trivial_commands(CLI::App& app) {
  app.add_subcommand("hello", "The trivial study's one command")->callback([] { std::puts("hello"); });
}

}  // namespace distancies::cli
