// Fuzz target: the REPL protocol (`WORD FLAG`, `EXPR ! FLAG`, `:begin`/`:end` blocks, `:batch
// FILE`) and batch files, each query parsed against a small synthetic model.
#include <sstream>
#include <string>

#include "harness/cli/repl.hpp"
#include "harness/expression.hpp"
#include "harness/synthetic.hpp"
#include "tests/fuzz/fuzz_common.hpp"

using namespace distancies;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Model model = make_synthetic_model(300, 8, 1);
  const std::string text(reinterpret_cast<const char*>(data), size);
  cli::ReplActions act;
  act.query = [](const std::string& t, bool) { make_query(model, t); };
  act.batch = [](const std::vector<cli::BatchLine>& block) {
    int failed = 0;
    for (const auto& l : block) try {
        make_query(model, l.text);
      } catch (const Error&) {
        ++failed;
      }
    return failed;
  };
  // `:batch FILE` reads the fuzz input itself as the batch file, never a path from the input.
  const std::string self = fuzz::write("batch.txt", data, size);
  act.batch_file = [&](const std::string&) { return act.batch(cli::read_batch_file(self)); };
  static std::FILE* quiet = std::fopen("/dev/null", "w");  // error lines are the expected output
  act.errors = quiet;
  std::istringstream in(text);
  cli::run_repl(in, act);
  return 0;
}
