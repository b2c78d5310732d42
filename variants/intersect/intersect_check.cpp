// The posting-list study's registry check: names unique, every row's grain has what it needs
// (a CPU function or a kernel) and its name says its algorithm and grain.
#include "variants/intersect/intersect_registry.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

// The study's registry registrar (cmake/studies.cmake).
namespace registry {
void add_intersect_families(std::vector<Family>& out);
}

void registry::add_intersect_families(std::vector<Family>& out) {
  const auto& t = intersect_variants();
  out.push_back({t.study(), t.family(), t.what(),
                 [&t] {
                   return registry::views<IntersectVariant>(t, [](const IntersectVariant& v) {
                     return std::string(v.mark ? "GPU" : "CPU") + ", " + method_name(v.method) + ", " + grain_label(v);
                   });
                 },
                 [&t] {
                   std::vector<std::string> p;
                   registry::check_names(t, p);
                   for (const IntersectVariant& v : t)
                     for (std::string& s : intersect_variant_problems(v)) p.push_back(std::move(s));
                   return p;
                 }});
}

}  // namespace distancies
