// distancies: exact cosine-similarity search over word embeddings, CPU and GPU.
#include <cstdio>
#include <exception>

#include "harness/cli/commands.hpp"
#include "harness/version.hpp"
#include "runtime/error.hpp"
#include "variants/registry_model.hpp"

int main(int argc, char** argv) {
  CLI::App app{"distancies: exact cosine-similarity search over word embeddings (CPU and GPU)"};
  app.set_version_flag("--version", std::string(DISTANCIES_VERSION) + " (" + distancies::git_commit() + ")");
  app.require_subcommand(1);
  distancies::cli::add_study_commands(app);  // each study's registrar (cmake/studies.cmake)
  try {
    distancies::registry::check_all();  // a bad registry row is an error here, never at launch
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "distancies: error: out of host memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "distancies: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
