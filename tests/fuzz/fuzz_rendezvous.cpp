// Fuzz target: the rendezvous's two line parsers (harness/scale/rendezvous.hpp), whatever a stray
// connection sends rank 0 or a foreign rank 0 answers: a hello or an error, never a crash, and an
// accepted line always means what it says.
#include <cstring>
#include <string>

#include "harness/scale/rendezvous.hpp"
#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string line(reinterpret_cast<const char*>(data), size);
  std::string why;
  if (const auto h = distancies::parse_rendezvous_hello(line, &why)) {
    if (h->rank < 1 || h->rank >= h->size || h->token.empty() || h->token.size() > 128) std::abort();
    // What it accepted is what it would write.
    if (distancies::rendezvous_hello(h->token, h->rank, h->size) != line + "\n") std::abort();
  } else if (why.empty()) {
    std::abort();
  }
  unsigned char id[128];
  why.clear();
  if (distancies::parse_rendezvous_reply(line, id, sizeof id, &why)) {
    if (distancies::rendezvous_ok(id, sizeof id) != line + "\n") std::abort();
  } else if (why.empty()) {
    std::abort();
  }
  return 0;
}
