// Fuzz target: the StudyText reader (docs/formats.md) on arbitrary bytes.
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::load(fuzz::write("s.txt", data, size), distancies::Format::StudyText);
  return 0;
}
