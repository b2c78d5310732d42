#include "variants/embeddings/policy.hpp"

namespace distancies::policy {

std::string policy_for(int major, int minor) {
  const std::string base = std::string(kActiveName) + " policy";
  if (major == 9 && minor == 0) return base + " (measured on " + kMeasuredOn + ")";
  return base + ", not tuned for sm_" + std::to_string(major) + std::to_string(minor) + " (measured on " + kMeasuredOn +
         ")";
}

}  // namespace distancies::policy
