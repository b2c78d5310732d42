// The model resident on the GPU: vectors (rows x ld) and norms.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "kernels/embeddings/data_family.hpp"
#include "runtime/device.hpp"
#include "runtime/model.hpp"
#include "runtime/norm_range.hpp"

namespace distancies {

struct DeviceModel {
  std::int64_t rows = 0;
  int dim = 0;
  int ld = 0;
  DeviceBuffer vectors;  // rows * ld floats
  DeviceBuffer norms;    // rows floats

  std::size_t vector_bytes() const { return static_cast<std::size_t>(rows) * ld * sizeof(float); }
  const float* d_vectors() const { return vectors.as<float>(); }
  const float* d_norms() const { return norms.as<float>(); }

  // Copies of the rows a study makes for its scans (the embeddings study's reduced copies,
  // variants/embeddings/model_copies.hpp): made explicitly by the study's copy rows before a
  // search reads them, kept here under the row's name so that they live and go with the rows, and
  // only looked up after that (a look-up never allocates or launches).
  struct Copy {
    virtual ~Copy() = default;
    virtual std::size_t bytes() const = 0;  // device bytes it holds
  };
  const Copy* find_copy(std::string_view name) const;
  const Copy& keep_copy(std::string_view name, std::unique_ptr<Copy> copy);
  // The copy of that name rows_changed() dropped, for its maker to re-fill in place (null: none).
  std::unique_ptr<Copy> take_stale_copy(std::string_view name);
  // Frees the copy of that name (a benchmark that times its making; nothing where none is kept).
  void drop_copy(std::string_view name);
  std::size_t copy_bytes() const;  // every copy kept
  bool is_view() const { return is_view_; }

  // Smallest positive and largest row norm, and whether all are finite (the embeddings study's
  // range guard rests on it). Measured once by whoever writes the norms (measure_norm_range(), a
  // launch and a round trip), so reading it never allocates or launches; reading it before then
  // is a programming error (std::logic_error).
  const NormRange& norm_range() const;
  void measure_norm_range();

  // A model whose rows live in memory it does not own (a streamed chunk, a slot re-filled per
  // chunk): `vectors` and `norms` are borrowed. The norm range is given (the whole model's, so
  // every chunk's error bounds are the whole model's).
  static DeviceModel view(const float* vectors, const float* norms, std::int64_t rows, int dim, int ld,
                          const NormRange& range);
  // The rows changed under a view: drop the copies and keep them as stale (their allocations are
  // re-filled by the next preparation), keep the given norm range.
  void rows_changed();

 private:
  NormRange range_;
  bool have_range_ = false;
  std::map<std::string, std::unique_ptr<Copy>, std::less<>> copies_, stale_;
  bool is_view_ = false;  // a streamed chunk: its rows change under it
};

// Norm range of host norms (what norm_range() computes on the GPU).
NormRange host_norm_range(const float* norms, std::int64_t rows);

// Copies a host model to the GPU. `pinned`: stage through page-locked chunks (the study's V2
// default); otherwise one pageable cudaMemcpy.
DeviceModel upload_model(const Model& m, bool pinned = true);

// Builds the synthetic model directly on the GPU (identical to make_synthetic_model()); with
// `first_row`, rows first_row .. first_row + rows - 1 of it (a shard or a chunk); any data family.
DeviceModel generate_synthetic_on_device(std::int64_t rows, int dim, std::uint64_t seed, std::int64_t first_row = 0,
                                         const DataFamily& family = {});

// Copies a device model back to pageable host memory (vectors and norms only, no words).
Model download_model(const DeviceModel& dm);

}  // namespace distancies
