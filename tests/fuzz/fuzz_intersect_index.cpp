// Fuzz target: the intersection study's binary index ([len][ids...] lists) on arbitrary bytes.
#include <vector>

#include "harness/intersect/index.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    distancies::intersect::parse_index("fuzz.bin", std::vector<unsigned char>(data, data + size));
  } catch (const distancies::Error&) {
  }
  return 0;
}
