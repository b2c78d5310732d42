// One exception type for every user-facing failure: the CLI prints its message as one line.
#pragma once
#include <stdexcept>
#include <string>

namespace distancies {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Memory ran out: the GPU's, page-locked host memory, or a library's workspace (cuBLAS, CUB).
// Every allocation failure is this one type (raised by throw_out_of_memory, runtime/cuda_check.hpp),
// so callers that can work in smaller pieces (the batch splitter) catch them all.
struct OutOfMemory : Error {
  using Error::Error;
};

// Why something cannot run here (a scan on this model, a copy of these values), as one line for
// the user; functions return std::optional<Refusal>, empty when it can run.
struct Refusal {
  std::string why;
};

}  // namespace distancies
