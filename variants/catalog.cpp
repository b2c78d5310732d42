// Every study's families, in the order of cmake/studies.cmake: the catalog `distancies list`, the
// registry check and the reports read. add_study_families is generated from the studies' folders
// (variants/studies_families.cpp).
#include "variants/registry_model.hpp"

namespace distancies::registry {

void add_study_families(std::vector<Family>& out);

std::vector<Family>& catalog() {
  static std::vector<Family> families = [] {
    std::vector<Family> f;
    add_study_families(f);
    return f;
  }();
  return families;
}

}  // namespace distancies::registry
