// Fuzz target: the Word2VecBinary reader (docs/formats.md) on arbitrary bytes.
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::load(fuzz::write("w.bin", data, size), distancies::Format::Word2VecBinary);
  return 0;
}
