#include "harness/registry_report.hpp"

#include <cstdio>
#include <string>

#include "variants/registry_model.hpp"

namespace distancies {

namespace {
// "pipeline" -> "pipelines", "model copy" -> "model copies".
std::string plural(const std::string& what) {
  if (what.size() > 1 && what.back() == 'y' && std::string("aeiou").find(what[what.size() - 2]) == std::string::npos)
    return what.substr(0, what.size() - 1) + "ies";
  return what + "s";
}
}  // namespace

std::string describe_registry() {
  std::string out;
  char line[512];
  for (const registry::Family& f : registry::catalog()) {
    out += f.study + " / " + f.family + " (" + plural(f.what) + "):\n";
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
