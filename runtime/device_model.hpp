// The model resident on the GPU: vectors (rows x ld) and norms.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/embeddings/data_family.hpp"
#include "kernels/embeddings/storage.hpp"
#include "runtime/device.hpp"
#include "runtime/model.hpp"
#include "runtime/precision.hpp"

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

  // A 16-bit or int8 copy of the vectors, converted on first use and kept.
  struct Reduced {
    DeviceBuffer data;          // rows * storage_leading_dim(s, dim) elements, padding zero
    DeviceBuffer scale;         // I8: per row s_i = max_j |x_ij| / 127 (NaN for a non-finite row)
    DeviceBuffer correction;    // I8, centred: per row c_i = mu . (y_i - s_i codes_i) (fp64, rounded)
    DeviceBuffer flag;          // 16-bit: the conversion's out-of-range flag (kept: freeing it would
                                // wait for the whole device, a streamed chunk's copy included)
    float min_norm = 0;         // smallest non-zero row norm (for the error bound)
    float max_norm = 0;         // largest row norm (for the range guard)
    bool out_of_range = false;  // some element does not fit (fp16: |x_j| >= 65520 becomes Inf): unusable
    std::size_t bytes() const { return data.bytes(); }
  };
  const Reduced& reduced(Storage s) const;
  bool has_reduced(Storage s) const {
    return s == Storage::F16 ? have_f16_ : s == Storage::BF16 ? have_bf16_ : s == Storage::I8 ? have_i8_ : true;
  }

  // The batched int8 walk's copy (kernels/embeddings/tiled_i8.cuh): rows sorted by
  // 127 |x| / max |x|, int8 codes a row (ldg = the dimension rounded up to 16 bytes, padding zero)
  // with a scale that makes |x| / s the same across each 64-row tile, the sorted rows' places in
  // the model, and per tile U_lo, U_hi, nu_max. Built on first use (a CUB radix sort of the keys)
  // and kept, as the reduced copies are.
  struct TiledI8 {
    DeviceBuffer codes;  // rows x ldg int8
    DeviceBuffer order;  // rows int: sorted row -> model row
    DeviceBuffer tiles;  // ceil(rows / 64) float4
    int ldg = 0;
    int extra = 0;  // the projected copy's columns of mu . y (tiled_i8.cuh), 0 for the others
    std::size_t bytes() const { return codes.bytes() + order.bytes() + tiles.bytes(); }
  };
  const TiledI8& tiled_i8() const;

  // The centred copies (kernels/embeddings/centre.cuh; docs/batch.md, "Centred copies"): mu, the
  // mean of the normalised rows, and the fp16, bf16, int8 and tiled int8 copies of y = x - |x| mu,
  // which the reduced one-query scans and the filtered batch scans read in place of the plain ones
  // where `used`. Made on first use, kept.
  struct Centre {
    DeviceBuffer mean;             // dim floats
    std::vector<float> mean_host;  // the same, on the host (a query's shift)
    float mean_norm2 = 0;          // |mu|^2: about the mean cosine between two rows
    float rho = 1;                 // >= |y| / |x| for every row (rounded up)
    bool used = false;
    bool projected = false;  // the tiled int8 copy is projected too (tiled_i8.cuh)
    std::string why;         // why not used, or why used
  };
  const Centre& centre() const;
  const Reduced& centred(Storage s) const;  // F16, BF16 or I8
  const TiledI8& centred_tiled_i8() const;

  // Smallest positive and largest row norm, and whether all are finite: computed on first use
  // and kept (the range guard of runtime/precision.hpp).
  const NormRange& norm_range() const;

  // A model whose rows live in memory it does not own (a streamed chunk, a slot re-filled per
  // chunk): `vectors` and `norms` are borrowed. The norm range is given (the whole model's, so
  // every chunk's error bounds are the whole model's).
  static DeviceModel view(const float* vectors, const float* norms, std::int64_t rows, int dim, int ld,
                          const NormRange& range);
  // The rows changed under a view: drop the reduced copies and remember them as stale (their
  // allocations are reused by the next reduced()), keep the given norm range.
  void rows_changed();

 private:
  mutable Reduced f16_, bf16_, i8_;
  mutable bool have_f16_ = false, have_bf16_ = false, have_i8_ = false;
  mutable TiledI8 tiled_i8_;
  mutable bool have_tiled_i8_ = false;
  mutable NormRange range_;
  mutable bool have_range_ = false;
  mutable Centre centre_;
  mutable Reduced centred_f16_, centred_bf16_, centred_i8_;
  mutable TiledI8 centred_tiled_i8_;
  mutable bool have_centre_ = false, have_centred_f16_ = false, have_centred_bf16_ = false, have_centred_i8_ = false,
               have_centred_tiled_i8_ = false;
  bool is_view_ = false;  // a streamed chunk: its rows change, so it is never centred
  const TiledI8& build_tiled_i8(TiledI8& slot, const float* mean, bool projected) const;
  Reduced convert_16bit(Storage s, Reduced old, const float* mean) const;
  Reduced quantize_i8(Reduced old, const float* mean) const;
  const float* centred_mean() const;  // the centre's mean; Error where the model is not centred
};

// The centring policy: DISTANCIES_CENTRE=on, off or auto (unset: auto, which centres where the
// mean cosine |mu|^2 is at least kCentreFrom; off keeps the plain copies everywhere).
constexpr float kCentreFrom = 0.05f;
// The projection policy of the centred tiled int8 copy: DISTANCIES_PROJECT=on, off or auto (unset:
// auto, which projects where |mu|^2 is at least kProjectFrom; below it the query's residual is
// nearly the whole query, and the extra columns would cost bytes for little).
constexpr float kProjectFrom = 0.3f;

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
