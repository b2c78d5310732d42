#include "harness/registry_report.hpp"

#include <cstdio>

#include "variants/registry_model.hpp"

namespace distancies {

std::string describe_registry() {
  std::string out;
  char line[512];
  for (const registry::Family& f : registry::catalog()) {
    out += f.study + " / " + f.family + " (" + f.what + "s):\n";
    for (const registry::EntryView& e : f.entries()) {
      std::snprintf(line, sizeof line, "  %-22s %-18s ", e.name.c_str(), e.origin.c_str());
      out += line + e.description;
      if (!e.requirements.empty()) out += " [" + e.requirements + "]";
      out += "\n";
    }
  }
  return out;
}

nlohmann::json registry_json() {
  nlohmann::json j = nlohmann::json::object();
  for (const registry::Family& f : registry::catalog()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const registry::EntryView& e : f.entries()) {
      nlohmann::json row = {
          {"name", e.name}, {"description", e.description}, {"origin", e.origin}, {"requirements", e.requirements}};
      if (!e.traits.empty()) {
        nlohmann::json traits = nlohmann::json::object();
        for (const auto& [key, value] : e.traits) traits[key] = value;
        row["traits"] = traits;
      }
      rows.push_back(row);
    }
    j[f.study][f.family] = rows;
  }
  return j;
}

}  // namespace distancies
