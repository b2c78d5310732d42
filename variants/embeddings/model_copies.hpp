// The model copies as registered rows. A copy is what a reduced scan reads in place of the fp32
// rows (a 16-bit or int8 copy, the int8 walk's tiled copy, the centred forms and the centre they
// are made from). A row owns its making, the bytes it will hold and its refusal; the searchers
// prepare the copies a plan names (prepare_copy) before they launch, and the scans then only look
// them up (copy_of), which never allocates or launches. The copies are kept with the model
// (DeviceModel::keep_copy), so they go with its rows. Adding one is a maker and one row here
// (docs/architecture.md, "Walkthrough: add a model copy").
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/embeddings/storage.hpp"
#include "runtime/device_model.hpp"
#include "runtime/error.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

using registry::Table;

// A 16-bit or int8 copy of the rows, or of the centred rows.
struct ReducedCopy final : DeviceModel::Copy {
  DeviceBuffer data;          // rows * storage_leading_dim(s, dim) elements, padding zero
  DeviceBuffer scale;         // I8: per row s_i = max_j |x_ij| / 127 (NaN for a non-finite row)
  DeviceBuffer correction;    // I8, centred: per row c_i = mu . (y_i - s_i codes_i) (fp64, rounded)
  DeviceBuffer flag;          // 16-bit: the conversion's out-of-range flag (kept: freeing it would
                              // wait for the whole device, a streamed chunk's copy included)
  float min_norm = 0;         // smallest non-zero row norm (for the error bound)
  float max_norm = 0;         // largest row norm (for the range guard)
  bool out_of_range = false;  // some element does not fit (fp16: |x_j| >= 65520 becomes Inf): unusable
  std::size_t bytes() const override { return data.bytes() + scale.bytes() + correction.bytes(); }
};

// The batched int8 walk's copy (kernels/embeddings/tiled_i8.cuh): rows sorted by
// 127 |x| / max |x|, int8 codes a row (ldg = the dimension rounded up to 16 bytes, padding zero)
// with a scale that makes |x| / s the same across each 64-row tile, the sorted rows' places in
// the model, and per tile U_lo, U_hi, nu_max.
struct TiledI8Copy final : DeviceModel::Copy {
  DeviceBuffer codes;  // rows x ldg int8
  DeviceBuffer order;  // rows int: sorted row -> model row
  DeviceBuffer tiles;  // ceil(rows / 64) float4
  int ldg = 0;
  int extra = 0;  // the projected copy's columns of mu . y (tiled_i8.cuh), 0 for the others
  std::size_t bytes() const override { return codes.bytes() + order.bytes() + tiles.bytes(); }
};

// The centre the centred copies are made from (kernels/embeddings/centre.cuh; docs/batch.md,
// "Centred copies"): mu, the mean of the normalised rows; the centred copies hold y = x - |x| mu
// and the reduced scans read them in place of the plain ones where `used`.
struct ModelCentre final : DeviceModel::Copy {
  DeviceBuffer mean;             // dim floats
  std::vector<float> mean_host;  // the same, on the host (a query's shift)
  float mean_norm2 = 0;          // |mu|^2: about the mean cosine between two rows
  float rho = 1;                 // >= |y| / |x| for every row (rounded up)
  bool used = false;
  bool projected = false;  // the tiled int8 copy is projected too (tiled_i8.cuh)
  std::string why;         // why not used, or why used
  std::size_t bytes() const override { return mean.bytes(); }
};

// The centring policy: DISTANCIES_CENTRE=on, off or auto (unset: auto, which centres where the
// mean cosine |mu|^2 is at least kCentreFrom; off keeps the plain copies everywhere).
constexpr float kCentreFrom = 0.05f;
// The projection policy of the centred tiled int8 copy: DISTANCIES_PROJECT=on, off or auto (unset:
// auto, which projects where |mu|^2 is at least kProjectFrom; below it the query's residual is
// nearly the whole query, and the extra columns would cost bytes for little).
constexpr float kProjectFrom = 0.3f;

struct ModelCopyRow {
  const char* name = nullptr;
  const char* description = nullptr;
  const char* origin = nullptr;
  const char* after = nullptr;    // a copy made before this one (its maker reads it): the centre
  const char* centred = nullptr;  // the copy a centring reader takes in its place where the model is centred
  // Device bytes the copy of a rows x dim model holds at most (the plan's figure).
  std::size_t (*bytes)(long long rows, int dim) = nullptr;
  // Why this model cannot have it (empty: it can); checked before making it.
  std::optional<Refusal> (*refusal)(const DeviceModel&) = nullptr;
  // Makes it from the model (and the copy it comes after), re-filling `stale` (a copy of the rows
  // before a view's rows changed, or null) where its sizes fit.
  std::unique_ptr<DeviceModel::Copy> (*make)(const DeviceModel&, std::unique_ptr<DeviceModel::Copy> stale) = nullptr;

  // Resolved when the table is built.
  const ModelCopyRow* after_row = nullptr;
  const ModelCopyRow* centred_row = nullptr;

  ModelCopyRow comes_after(const char* copy) const { return registry::with_field(*this, &ModelCopyRow::after, copy); }
  ModelCopyRow centres_as(const char* copy) const { return registry::with_field(*this, &ModelCopyRow::centred, copy); }
  ModelCopyRow holds(std::size_t (*fn)(long long, int)) const {
    return registry::with_field(*this, &ModelCopyRow::bytes, fn);
  }
  ModelCopyRow refuses(std::optional<Refusal> (*fn)(const DeviceModel&)) const {
    return registry::with_field(*this, &ModelCopyRow::refusal, fn);
  }
  ModelCopyRow made_by(std::unique_ptr<DeviceModel::Copy> (*fn)(const DeviceModel&,
                                                                std::unique_ptr<DeviceModel::Copy>)) const {
    return registry::with_field(*this, &ModelCopyRow::make, fn);
  }
};

// The rows, one a maker (model_copies.cu).
std::vector<ModelCopyRow> builtin_model_copies();

const Table<ModelCopyRow>& model_copies();
// An unknown name is an Error listing the known ones.
const ModelCopyRow& model_copy(std::string_view name);
// Adds a row after the built-in ones (a test's trivial copy, a plug-in).
const ModelCopyRow& add_model_copy(ModelCopyRow row);
// The copies the reduced scans read for a storage: "f16", "bf16", "i8" (null for F32).
const ModelCopyRow* reduced_copy_row(Storage s);
// The tiled int8 copy the batched int8 walk reads.
const ModelCopyRow& tiled_i8_copy_row();
const ModelCopyRow& centre_copy_row();
// The rows' own checks (names, references, makers), for the start-up check.
std::vector<std::string> model_copy_problems(const ModelCopyRow& r);

// Makes `row`'s copy unless the model keeps it (the copy it comes after first); an Error (the row's
// refusal, or out of memory) where it cannot. Returns the copy.
const DeviceModel::Copy& prepare_copy(DeviceModel& m, const ModelCopyRow& row);
// The one rule of the centring readers: `row`'s centred form where the model is centred (`centre`,
// the model's used centre, non-null) and the row has one, else the row itself.
const ModelCopyRow& centred_or_plain(const ModelCopyRow& row, const ModelCentre* centre);
// For a reader that takes centred copies: prepares the centre, then centred_or_plain(row); returns
// the row prepared.
const ModelCopyRow& prepare_centred_or_plain(DeviceModel& m, const ModelCopyRow& row);

// The copy, prepared before; an Error naming the row where it was not (never made here).
const DeviceModel::Copy& prepared_copy(const DeviceModel& m, const ModelCopyRow& row);
template <class T>
const T& copy_of(const DeviceModel& m, const ModelCopyRow& row) {
  const T* c = dynamic_cast<const T*>(&prepared_copy(m, row));
  if (!c) throw Error(std::string("model copy '") + row.name + "' is not of the type asked for");
  return *c;
}
// Whether the model keeps `row`'s copy or its centred form (nothing is made here).
bool keeps_copy(const DeviceModel& m, const ModelCopyRow& row);
// The model's centre where it was prepared and is used (null: the model reads its plain copies).
const ModelCentre* used_centre(const DeviceModel& m);

// Prepared, then looked up: for the tests and fixtures that read a copy directly.
// `centred`: the centred form (an Error where the model is not centred).
const ReducedCopy& prepared_reduced(DeviceModel& m, Storage s, bool centred = false);
const TiledI8Copy& prepared_tiled_i8(DeviceModel& m, bool centred = false);
const ModelCentre& prepared_centre(DeviceModel& m);

}  // namespace distancies
