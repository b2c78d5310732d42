// Fuzz target: the Native reader (docs/formats.md) on arbitrary bytes.
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::load(fuzz::write("n.dsv", data, size), distancies::Format::Native);
  return 0;
}
