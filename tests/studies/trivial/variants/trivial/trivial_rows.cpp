// The trivial study's rows: one table of one row, and its registry registrar.
#include <vector>

#include "variants/registry_model.hpp"

namespace distancies::registry {

namespace {
struct Greeting {
  const char* name;
  const char* description;
  const char* origin;
};

const Table<Greeting>& greetings() {
  static const Table<Greeting> t("trivial", "greeting", "greeting", {Greeting{"hello", "says hello", "study"}});
  return t;
}
}  // namespace

void add_trivial_families(std::vector<Family>& out);
void add_trivial_families(std::vector<Family>& out) {
  out.push_back({"trivial", "greeting", "greeting", [] { return views(greetings()); },
                 [] {
                   std::vector<std::string> problems;
                   check_names(greetings(), problems);
                   return problems;
                 }});
}

}  // namespace distancies::registry
