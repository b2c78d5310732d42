// The catalog of every study's registered rows, as `distancies list` prints it and as JSON
// (the bench context and the reports read the same).
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace distancies {

// A heading per study and family, then a line per row: name, origin, description, needs.
std::string describe_registry();

// {"embeddings": {"dot": [{"name", "description", "origin", "requirements"}, ...], ...}, ...}
nlohmann::json registry_json();

}  // namespace distancies
