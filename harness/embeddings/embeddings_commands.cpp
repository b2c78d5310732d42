// The embeddings study's subcommand registrar (cmake/studies.cmake): the model and search commands
// (harness/cli/commands.cpp, search_commands.cpp).
#include "harness/cli/commands.hpp"

namespace distancies::cli {

void add_embeddings_commands(CLI::App& app) {
  add_model_commands(app);
  add_search_commands(app);
}

}  // namespace distancies::cli
