// The registry model every study shares. Each registered thing (a dot variant, a top-k stage,
// a pipeline, a moments variant, ...) is a row of a typed table whose first columns are the
// same: name, description, origin. A table is one family of one study; the catalog lists every
// family so that `distancies list`, the JSON and the reports find new rows with no other change.
// Rows are checked once (names unique, references resolved) before anything runs.
#pragma once
#include <deque>
#include <functional>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/error.hpp"

namespace distancies::registry {

// A copy of `row` with one field set: what a row's named setters return
// (Pipeline{...}.falls_back_to("fused")), so that no row is built from positional placeholders.
template <class Row, class T, class V>
Row with_field(const Row& row, T Row::*field, V&& value) {
  Row r = row;
  r.*field = std::forward<V>(value);
  return r;
}

// The columns every row has, as the catalog shows them.
struct EntryView {
  std::string name;
  std::string description;
  std::string origin;        // the study version it comes from ("V4"), "study", "beyond the study"
  std::string requirements;  // what it needs to run (empty: nothing special)
  // Machine-readable facts the reports use (e.g. a batch pipeline's operand precision), in order.
  std::vector<std::pair<std::string, std::string>> traits;
};

// A family of rows of type Row (which has `name`, `description`, `origin`). Rows live in a
// deque so references stay valid when a row is added (tests add trivial rows).
template <class Row>
class Table {
 public:
  Table(const char* study, const char* family, const char* what, std::initializer_list<Row> rows)
      : study_(study), family_(family), what_(what), rows_(rows) {}
  Table(const char* study, const char* family, const char* what, std::vector<Row> rows)
      : study_(study),
        family_(family),
        what_(what),
        rows_(std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end())) {}

  const std::deque<Row>& rows() const { return rows_; }
  auto begin() const { return rows_.begin(); }
  auto end() const { return rows_.end(); }
  std::size_t size() const { return rows_.size(); }
  const Row& front() const { return rows_.front(); }

  const Row* find(std::string_view name) const {
    for (const Row& r : rows_)
      if (name == r.name) return &r;
    return nullptr;
  }
  // An unknown name is one error line listing the known ones.
  const Row& at(std::string_view name) const;
  // Appends a row (before the registry is checked, e.g. by a test or a plug-in); returns it.
  const Row& add(Row r) {
    rows_.push_back(std::move(r));
    return rows_.back();
  }
  std::string names() const {
    std::string s;
    for (const Row& r : rows_) s += (s.empty() ? "" : ", ") + std::string(r.name);
    return s;
  }
  const char* study() const { return study_; }
  const char* family() const { return family_; }
  const char* what() const { return what_; }

 private:
  const char* study_;
  const char* family_;
  const char* what_;
  std::deque<Row> rows_;
};

[[noreturn]] inline void throw_unknown(const char* what, std::string_view name, const std::string& known) {
  throw Error("unknown " + std::string(what) + " '" + std::string(name) + "' (known: " + known + ")");
}

template <class Row>
const Row& Table<Row>::at(std::string_view name) const {
  if (const Row* r = find(name)) return *r;
  throw_unknown(what_, name, names());
}

// One family as the catalog lists it.
struct Family {
  std::string study;   // "embeddings", "moments", ...
  std::string family;  // "dot", "topk", "pipeline", ...
  std::string what;    // "dot variant", used in messages and headings
  std::function<std::vector<EntryView>()> entries;
  // Problems with this family's rows (empty: none). Checks names and every reference.
  std::function<std::vector<std::string>()> problems;
};

// Every family of every study, in registration order (each study adds its own once).
std::vector<Family>& catalog();

// The views of a table's rows, for a Family's `entries` (requirements from a row function).
template <class Row>
std::vector<EntryView> views(
    const Table<Row>& t, std::function<std::string(const Row&)> requirements = nullptr,
    std::function<std::vector<std::pair<std::string, std::string>>(const Row&)> traits = nullptr) {
  std::vector<EntryView> v;
  for (const Row& r : t)
    v.push_back({r.name, r.description, r.origin, requirements ? requirements(r) : std::string(),
                 traits ? traits(r) : std::vector<std::pair<std::string, std::string>>{}});
  return v;
}

// Names that are empty or repeat within a table.
template <class Row>
void check_names(const Table<Row>& t, std::vector<std::string>& out) {
  for (auto i = t.begin(); i != t.end(); ++i) {
    if (!i->name || !*i->name) out.push_back(std::string(t.what()) + " with an empty name");
    for (auto j = t.begin(); j != i; ++j)
      if (i->name && j->name && std::string_view(i->name) == j->name)
        out.push_back(std::string(t.what()) + " '" + i->name + "' registered twice");
  }
}

// Every problem in every family; check_all() throws one Error naming them all.
std::vector<std::string> all_problems();
void check_all();

}  // namespace distancies::registry
