#include "harness/scale/host_copy.hpp"

#include <algorithm>
#include <chrono>
#include <string>

#include "runtime/error.hpp"

namespace distancies {

namespace {
void to_host(void* dst, const DeviceBuffer& src, std::size_t bytes, const char* what) {
  if (src.bytes() < bytes) throw Error(std::string("host copy: the chunk's ") + what + " is shorter than its rows");
  CUDA_CHECK(cudaMemcpy(dst, src.get(), bytes, cudaMemcpyDeviceToHost));
}

// `from` with its mean borrowed at `mean` (dim floats that outlive it): what a chunk keeps, and
// what its view is given each time the chunk is bound.
std::unique_ptr<ModelCentre> centre_at(const ModelCentre& from, const float* mean, int dim) {
  auto c = std::make_unique<ModelCentre>();
  c->mean = DeviceBuffer::borrow(const_cast<float*>(mean), static_cast<std::size_t>(dim) * sizeof(float));
  c->mean_host = from.mean_host;
  c->mean_norm2 = from.mean_norm2;
  c->rho = from.rho;
  c->used = from.used;
  c->projected = from.projected;
  c->why = from.why;
  return c;
}
}  // namespace

std::size_t HostCopy::slot_row_bytes() const {
  return code_bytes + (scale.get() ? sizeof(float) : 0) + (correction.get() ? sizeof(float) : 0);
}

HostCopy make_host_copy(const HostRows& rows, Storage storage, std::int64_t chunk_rows) {
  require_device();
  const ModelCopyRow* plain = reduced_copy_row(storage);
  if (!plain) throw Error("an fp32 scan streams the rows themselves, not a copy");
  if (chunk_rows <= 0) throw Error("host copy: chunks of at least one row");
  const auto t0 = std::chrono::steady_clock::now();
  HostCopy hc;
  hc.storage = storage;
  hc.chunk_rows = chunk_rows;
  hc.dim = rows.dim;
  hc.code_bytes = static_cast<std::size_t>(storage_leading_dim(storage, rows.dim)) * storage_bytes(storage);
  const std::size_t n_all = static_cast<std::size_t>(std::max<std::int64_t>(rows.rows, 1));
  hc.codes = PinnedBuffer(n_all * hc.code_bytes, "the streamed model's reduced copy");
  if (storage == Storage::I8) hc.scale = PinnedBuffer(n_all * sizeof(float), "the int8 copy's row scales");
  const std::int64_t chunks = (rows.rows + chunk_rows - 1) / chunk_rows;
  hc.means = DeviceBuffer(static_cast<std::size_t>(std::max<std::int64_t>(chunks, 1)) * rows.dim * sizeof(float),
                          "the chunks' centres");
  const std::int64_t block = std::min(chunk_rows, std::max<std::int64_t>(rows.rows, 1));
  DeviceBuffer vectors(static_cast<std::size_t>(block) * rows.ld * sizeof(float), "a chunk of rows to copy");
  DeviceBuffer norms(static_cast<std::size_t>(block) * sizeof(float), "their norms");
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t lo = c * chunk_rows, n = std::min(chunk_rows, rows.rows - lo);
    const std::size_t count = static_cast<std::size_t>(n);
    CUDA_CHECK(cudaMemcpy(vectors.get(), rows.vectors + lo * rows.ld, count * rows.ld * sizeof(float),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(norms.get(), rows.norms + lo, count * sizeof(float), cudaMemcpyHostToDevice));
    // The chunk as a model of its own, not a view: its rows stay put while its copy is made once,
    // so the centring policy may centre it (about its own mean; its bounds from its own norms).
    DeviceModel view;
    view.rows = n;
    view.dim = rows.dim;
    view.ld = rows.ld;
    view.vectors = DeviceBuffer::borrow(vectors.get(), count * rows.ld * sizeof(float));
    view.norms = DeviceBuffer::borrow(norms.get(), count * sizeof(float));
    view.measure_norm_range();
    const ModelCopyRow& row = prepare_centred_or_plain(view, *plain);
    const auto& copy = copy_of<ReducedCopy>(view, row);
    to_host(hc.codes.as<char>() + lo * hc.code_bytes, copy.data, count * hc.code_bytes, "codes");
    if (hc.scale.get()) to_host(hc.scale.as<float>() + lo, copy.scale, count * sizeof(float), "row scales");
    if (copy.correction.get()) {
      if (!hc.correction.get()) hc.correction = PinnedBuffer(n_all * sizeof(float), "the int8 copy's row corrections");
      to_host(hc.correction.as<float>() + lo, copy.correction, count * sizeof(float), "row corrections");
    }
    HostCopy::Chunk ch;
    ch.row = &row;
    ch.min_norm = copy.min_norm;
    ch.max_norm = copy.max_norm;
    ch.out_of_range = copy.out_of_range;
    if (const auto* centre = dynamic_cast<const ModelCentre*>(view.find_copy(centre_copy_row().name))) {
      float* mean = hc.means.as<float>() + c * rows.dim;
      CUDA_CHECK(cudaMemcpy(mean, centre->mean.get(), rows.dim * sizeof(float), cudaMemcpyDeviceToDevice));
      ch.centre = centre_at(*centre, mean, rows.dim);
    }
    hc.chunks.push_back(std::move(ch));
  }
  hc.making_ms = std::chrono::duration<float, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return hc;
}

void bind_host_copy(const HostCopy& hc, std::int64_t c, DeviceModel& view, const SlotCopy& slot) {
  if (c < 0 || c >= static_cast<std::int64_t>(hc.chunks.size())) throw Error("host copy: no such chunk");
  const HostCopy::Chunk& ch = hc.chunks[static_cast<std::size_t>(c)];
  const std::size_t n = static_cast<std::size_t>(view.rows);
  const ModelCopyRow& plain = *reduced_copy_row(hc.storage);
  view.drop_copy(plain.name);
  if (plain.centred_row) view.drop_copy(plain.centred_row->name);
  view.drop_copy(centre_copy_row().name);
  if (ch.centre) view.keep_copy(centre_copy_row().name, centre_at(*ch.centre, ch.centre->mean.as<float>(), hc.dim));
  auto copy = std::make_unique<ReducedCopy>();
  copy->data = DeviceBuffer::borrow(const_cast<void*>(slot.codes), n * hc.code_bytes);
  if (hc.storage == Storage::I8) copy->scale = DeviceBuffer::borrow(const_cast<float*>(slot.scale), n * sizeof(float));
  if (ch.row != &plain && hc.storage == Storage::I8) {
    if (!slot.correction) throw Error("host copy: a centred int8 chunk without its row corrections");
    copy->correction = DeviceBuffer::borrow(const_cast<float*>(slot.correction), n * sizeof(float));
  }
  copy->min_norm = ch.min_norm;
  copy->max_norm = ch.max_norm;
  copy->out_of_range = ch.out_of_range;
  view.keep_copy(ch.row->name, std::move(copy));
}

}  // namespace distancies
