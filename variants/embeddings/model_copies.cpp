// The model copies' table, their preparation and their look-ups (model_copies.hpp).
#include "variants/embeddings/model_copies.hpp"

namespace distancies {

namespace {
void link(ModelCopyRow& r, const Table<ModelCopyRow>& all) {
  r.after_row = r.after ? all.find(r.after) : nullptr;
  r.centred_row = r.centred ? all.find(r.centred) : nullptr;
}

Table<ModelCopyRow>& copy_table() {
  static Table<ModelCopyRow> table("embeddings", "copy", "model copy", builtin_model_copies());
  static const bool linked = [] {
    for (const ModelCopyRow& r : table.rows()) link(const_cast<ModelCopyRow&>(r), table);
    return true;
  }();
  (void)linked;
  return table;
}

// The built-in rows other code reads by role, resolved once.
const ModelCopyRow& role(const char* name) { return copy_table().at(name); }
}  // namespace

const Table<ModelCopyRow>& model_copies() { return copy_table(); }
const ModelCopyRow& model_copy(std::string_view name) { return model_copies().at(name); }

const ModelCopyRow& add_model_copy(ModelCopyRow row) {
  Table<ModelCopyRow>& t = copy_table();
  ModelCopyRow& added = const_cast<ModelCopyRow&>(t.add(std::move(row)));
  link(added, t);
  return added;
}

const ModelCopyRow* reduced_copy_row(Storage s) {
  static const ModelCopyRow* f16 = &role("f16");
  static const ModelCopyRow* bf16 = &role("bf16");
  static const ModelCopyRow* i8 = &role("i8");
  return s == Storage::F16 ? f16 : s == Storage::BF16 ? bf16 : s == Storage::I8 ? i8 : nullptr;
}

const ModelCopyRow& tiled_i8_copy_row() {
  static const ModelCopyRow& r = role("tiled_i8");
  return r;
}

const ModelCopyRow& centre_copy_row() {
  static const ModelCopyRow& r = role("centre");
  return r;
}

std::vector<std::string> model_copy_problems(const ModelCopyRow& r) {
  std::vector<std::string> out;
  link(const_cast<ModelCopyRow&>(r), copy_table());  // a row added before the one it names, resolved now
  const std::string me = std::string("model copy '") + (r.name ? r.name : "") + "'";
  if (!r.make) out.push_back(me + " has no maker");
  if (!r.bytes) out.push_back(me + " does not say the bytes it holds");
  if (r.after && !r.after_row) out.push_back(me + " comes after unknown copy '" + r.after + "'");
  if (r.centred && !r.centred_row) out.push_back(me + " centres as unknown copy '" + r.centred + "'");
  if (r.after_row == &r) out.push_back(me + " comes after itself");
  return out;
}

const DeviceModel::Copy& prepare_copy(DeviceModel& m, const ModelCopyRow& row) {
  if (const DeviceModel::Copy* have = m.find_copy(row.name)) return *have;
  if (row.after_row) prepare_copy(m, *row.after_row);
  if (row.refusal)
    if (const auto no = row.refusal(m)) throw Error(std::string("model copy '") + row.name + "': " + no->why);
  if (!row.make) throw Error(std::string("model copy '") + row.name + "' has no maker");
  return m.keep_copy(row.name, row.make(m, m.take_stale_copy(row.name)));
}

const ModelCopyRow& centred_or_plain(const ModelCopyRow& row, const ModelCentre* centre) {
  return centre && row.centred_row ? *row.centred_row : row;
}

const ModelCopyRow& prepare_centred_or_plain(DeviceModel& m, const ModelCopyRow& row) {
  const ModelCentre* centre = nullptr;
  if (row.centred_row) {
    prepare_copy(m, centre_copy_row());
    centre = used_centre(m);
  }
  const ModelCopyRow& use = centred_or_plain(row, centre);
  prepare_copy(m, use);
  return use;
}

const DeviceModel::Copy& prepared_copy(const DeviceModel& m, const ModelCopyRow& row) {
  if (const DeviceModel::Copy* have = m.find_copy(row.name)) return *have;
  throw Error(std::string("model copy '") + row.name + "' was read before it was prepared (prepare_copy)");
}

bool keeps_copy(const DeviceModel& m, const ModelCopyRow& row) {
  return m.find_copy(row.name) || (row.centred_row && m.find_copy(row.centred_row->name));
}

const ModelCentre* used_centre(const DeviceModel& m) {
  const auto* c = dynamic_cast<const ModelCentre*>(m.find_copy(centre_copy_row().name));
  return c && c->used ? c : nullptr;
}

namespace {
// `plain`'s copy or its centred form, prepared, then looked up.
template <class T>
const T& prepared_as(DeviceModel& m, const ModelCopyRow& plain, bool centred) {
  if (centred && !plain.centred_row) throw Error(std::string("model copy '") + plain.name + "' has no centred form");
  const ModelCopyRow& row = centred ? *plain.centred_row : plain;
  prepare_copy(m, row);
  return copy_of<T>(m, row);
}
}  // namespace

const ReducedCopy& prepared_reduced(DeviceModel& m, Storage s, bool centred) {
  const ModelCopyRow* row = reduced_copy_row(s);
  if (!row) throw Error("an fp32 scan reads the model itself, not a copy");
  return prepared_as<ReducedCopy>(m, *row, centred);
}

const TiledI8Copy& prepared_tiled_i8(DeviceModel& m, bool centred) {
  return prepared_as<TiledI8Copy>(m, tiled_i8_copy_row(), centred);
}

const ModelCentre& prepared_centre(DeviceModel& m) {
  prepare_copy(m, centre_copy_row());
  return copy_of<ModelCentre>(m, centre_copy_row());
}

}  // namespace distancies
