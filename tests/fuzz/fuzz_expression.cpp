// Fuzz target: expressions ('king - man + woman', quoted words, bad operators) against a small
// synthetic model that has the study's words.
#include <string>

#include "harness/expression.hpp"
#include "harness/synthetic.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const distancies::Model model = distancies::make_synthetic_model(300, 8, 1);
  try {
    const distancies::Query q = distancies::make_query(model, std::string(reinterpret_cast<const char*>(data), size));
    if (q.vector.size() != static_cast<std::size_t>(model.dim)) std::abort();
  } catch (const distancies::Error&) {
  }
  return 0;
}
