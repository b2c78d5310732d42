// Each study adds its registry families to the catalog (variants/catalog.cpp calls these).
#pragma once
#include <vector>

#include "variants/registry_model.hpp"

namespace distancies::registry {

void add_embeddings_families(std::vector<Family>& out);  // variants/embeddings/embeddings_check.cpp
void add_moments_families(std::vector<Family>& out);     // variants/moments/registry.cpp
void add_intersect_families(std::vector<Family>& out);   // variants/intersect/intersect_check.cpp
void add_matmul_families(std::vector<Family>& out);      // variants/matmul/matmul_variants.cu

}  // namespace distancies::registry
