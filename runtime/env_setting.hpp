// A switch read from the environment (DISTANCIES_CENTRE=on|off|auto, DISTANCIES_WIDE_RERANK=on|off,
// ...): one of its allowed words, `unset` where it is not set; anything else is an Error naming the
// variable and the words it takes.
#pragma once
#include <cstdlib>
#include <initializer_list>
#include <string>

#include "runtime/error.hpp"

namespace distancies {

inline std::string env_setting(const char* name, std::initializer_list<const char*> allowed, const char* unset) {
  const char* env = std::getenv(name);
  const std::string v = env ? env : unset;
  std::string words;
  std::size_t i = 0;
  for (const char* a : allowed) {
    if (v == a) return v;
    words += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + std::string(a);
    ++i;
  }
  throw Error(std::string(name) + " must be " + words + ", not '" + v + "'");
}

}  // namespace distancies
