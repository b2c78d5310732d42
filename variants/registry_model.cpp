#include "variants/registry_model.hpp"

#include "runtime/error.hpp"

namespace distancies::registry {

std::vector<std::string> all_problems() {
  std::vector<std::string> out;
  for (const Family& f : catalog())
    if (f.problems)
      for (std::string& p : f.problems()) out.push_back(f.study + "/" + f.family + ": " + p);
  return out;
}

void check_all() {
  const std::vector<std::string> problems = all_problems();
  if (problems.empty()) return;
  std::string msg = "bad registry row" + std::string(problems.size() > 1 ? "s" : "") + ": ";
  for (std::size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
  throw Error(msg);
}

}  // namespace distancies::registry
