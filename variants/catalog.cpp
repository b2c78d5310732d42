// Every study's families, one line per study: the catalog `distancies list`, the registry check
// and the reports read.
#include "variants/registry_model.hpp"
#include "variants/study_families.hpp"

namespace distancies::registry {

std::vector<Family>& catalog() {
  static std::vector<Family> families = [] {
    std::vector<Family> f;
    add_embeddings_families(f);
    add_moments_families(f);
    add_intersect_families(f);
    add_matmul_families(f);
    return f;
  }();
  return families;
}

}  // namespace distancies::registry
