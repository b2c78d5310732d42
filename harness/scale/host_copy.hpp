// The reduced copy a streamed one-query pipeline reads (int8 codes with their row scales, fp16,
// bf16; plain or centred), made once chunk by chunk on the GPU by the copy rows' own makers
// (variants/embeddings/model_copies.hpp) and kept in page-locked host memory. A streamed chunk
// then moves its reduced bytes (int8: about a quarter of the fp32 rows') and the exact re-rank
// reads only its candidates' fp32 rows, in place in host memory through the rows' mapping
// (docs/scale.md, "Streaming the reduced copy").
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/embeddings/storage.hpp"
#include "runtime/device.hpp"
#include "runtime/device_model.hpp"
#include "runtime/pinned_model.hpp"
#include "variants/embeddings/model_copies.hpp"

namespace distancies {

struct HostCopy {
  Storage storage = Storage::F32;
  std::int64_t chunk_rows = 0;
  int dim = 0;
  std::size_t code_bytes = 0;  // one row's codes (the copy's leading dimension, padding zero)
  PinnedBuffer codes;          // rows x code_bytes
  PinnedBuffer scale;          // I8: a float a row
  PinnedBuffer correction;     // I8, where some chunk is centred: a float a row
  DeviceBuffer means;          // chunks x dim floats: each chunk's centre
  // What each chunk's copy is: the copy row made (plain or centred), its centre (null: none; the
  // mean borrowed from `means`), the copy's norms and range flag.
  struct Chunk {
    const ModelCopyRow* row = nullptr;
    std::unique_ptr<const ModelCentre> centre;
    float min_norm = 0, max_norm = 0;
    bool out_of_range = false;
  };
  std::vector<Chunk> chunks;
  float making_ms = 0;  // the making, once (not a search's)

  // Bytes a chunk slot moves per row besides the norm: codes, scale, correction.
  std::size_t slot_row_bytes() const;
  std::size_t bytes() const { return codes.bytes() + scale.bytes() + correction.bytes(); }
};

// The copy of `rows` that a scan of `storage` reads, chunk_rows a chunk (the stream's layout):
// each chunk's fp32 rows through the GPU once. OutOfMemory where the host cannot page-lock it.
HostCopy make_host_copy(const HostRows& rows, Storage storage, std::int64_t chunk_rows);

// The device buffers of a chunk slot that hold a chunk of the copy.
struct SlotCopy {
  const void* codes = nullptr;
  const float* scale = nullptr;
  const float* correction = nullptr;
};

// Keeps chunk c's copies (and its centre) on `view`, their bytes read at the slot's buffers; the
// view's vectors are the chunk's fp32 rows (mapped host memory) and its norms the slot's.
void bind_host_copy(const HostCopy& hc, std::int64_t c, DeviceModel& view, const SlotCopy& slot);

}  // namespace distancies
