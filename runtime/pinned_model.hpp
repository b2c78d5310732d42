// A model's rows in page-locked host memory, for streaming to the GPU in chunks
// (harness/scale/stream_search.hpp): the copy engine reads them at full speed and
// asynchronously, and nothing but the chunks in flight takes GPU memory.
#pragma once
#include <cstdint>

#include "kernels/embeddings/data_family.hpp"
#include "runtime/device.hpp"
#include "runtime/model.hpp"
#include "runtime/norm_range.hpp"

namespace distancies {

// Rows first .. first + rows - 1 of a model in host memory (page-locked for full-speed copies).
struct HostRows {
  const float* vectors = nullptr;  // rows * ld floats, row `first` at the front
  const float* norms = nullptr;    // rows floats
  std::int64_t rows = 0;
  int dim = 0;
  int ld = 0;
  std::int64_t first = 0;  // the global index of the front row (a shard's offset)
  NormRange range;         // of the whole model: every chunk's and shard's bounds agree

  std::size_t row_bytes() const { return static_cast<std::size_t>(ld) * sizeof(float) + sizeof(float); }
  std::size_t vector_bytes() const { return static_cast<std::size_t>(rows) * ld * sizeof(float); }
  // Rows [lo, hi) of these rows (lo, hi relative to the front).
  HostRows slice(std::int64_t lo, std::int64_t hi) const;
};

// A host model's rows as they are (pageable: copies from them are staged by the driver).
HostRows host_rows(const Model& m);

class PinnedModel {
 public:
  PinnedModel() = default;
  ~PinnedModel();
  PinnedModel(PinnedModel&& o) noexcept;
  PinnedModel& operator=(PinnedModel&& o) noexcept;
  PinnedModel(const PinnedModel&) = delete;
  PinnedModel& operator=(const PinnedModel&) = delete;

  // Page-locks a host model's vectors and norms where they are (cudaHostRegister: no copy), mapped
  // so that a kernel can read rows in place (a streamed host copy's re-rank).
  // The model must outlive this object and keep its storage.
  static PinnedModel register_model(const Model& m);
  // The synthetic model (make_synthetic_model()'s values) made on the GPU a block of rows at a
  // time and copied into page-locked host memory: models larger than the GPU, without a file.
  static PinnedModel synthetic(std::int64_t rows, int dim, std::uint64_t seed, const DataFamily& family = {});

  const HostRows& rows() const { return rows_; }

 private:
  void release() noexcept;
  HostRows rows_;
  PinnedBuffer owned_vectors_, owned_norms_;  // synthetic(): ours
  void* registered_[2] = {nullptr, nullptr};  // register_model(): page-locked, not ours
};

}  // namespace distancies
