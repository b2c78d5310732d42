// One exception type for every user-facing failure: the CLI prints its message as one line.
#pragma once
#include <stdexcept>
#include <string>

namespace distancies {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The GPU could not hold an allocation: callers that can work in smaller pieces catch it.
struct OutOfMemory : Error {
  using Error::Error;
};

}  // namespace distancies
