// Fuzz target: the intersection study's query file (term ids, up to five a line) on arbitrary text.
#include <string>

#include "harness/intersect/index.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    distancies::intersect::parse_queries("fuzz.queries", std::string(reinterpret_cast<const char*>(data), size), 1000);
  } catch (const distancies::Error&) {
  }
  return 0;
}
