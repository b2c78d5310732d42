// Fuzz target: the study's split format, X.keys and X.values; the input is cut in two at its
// first NUL byte (keys before, values after; no NUL: all keys, empty values).
#include <cstring>

#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const void* nul = std::memchr(data, 0, size);
  const std::size_t cut = nul ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(nul) - data) : size;
  const std::string keys = fuzz::write("m.keys", data, cut);
  fuzz::write("m.values", data + (nul ? cut + 1 : size), nul ? size - cut - 1 : 0);
  fuzz::load(keys, distancies::Format::StudySplit);
  return 0;
}
