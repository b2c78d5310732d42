#include "runtime/device_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <cub/device/device_radix_sort.cuh>

#include "kernels/embeddings/convert_reduced.cuh"
#include "kernels/embeddings/norm_range.cuh"
#include "kernels/embeddings/synthetic_fill.cuh"
#include "kernels/embeddings/tiled_i8.cuh"
#include "runtime/launch.hpp"

namespace distancies {

namespace {
constexpr int kElementThreads = 256;  // the one-thread-per-element kernels below

// A view's stale copy is re-filled in place when its size still fits (no cudaFree: that would
// wait for the whole device, the next chunk's copy included).
DeviceBuffer reuse_or_allocate(DeviceBuffer old, std::size_t bytes, const char* what) {
  if (old.get() && old.bytes() == bytes) return old;
  return DeviceBuffer(bytes, what);
}
}  // namespace

DeviceModel DeviceModel::view(const float* vectors, const float* norms, std::int64_t rows, int dim, int ld,
                              const NormRange& range) {
  DeviceModel dm;
  dm.rows = rows;
  dm.dim = dim;
  dm.ld = ld;
  dm.vectors = DeviceBuffer::borrow(const_cast<float*>(vectors), static_cast<std::size_t>(rows) * ld * sizeof(float));
  dm.norms = DeviceBuffer::borrow(const_cast<float*>(norms), static_cast<std::size_t>(rows) * sizeof(float));
  dm.range_ = range;
  dm.have_range_ = true;
  dm.is_view_ = true;
  return dm;
}

void DeviceModel::rows_changed() {
  have_f16_ = have_bf16_ = have_i8_ = have_tiled_i8_ = false;
  have_centre_ = have_centred_f16_ = have_centred_bf16_ = have_centred_i8_ = have_centred_tiled_i8_ = false;
}

NormRange host_norm_range(const float* norms, std::int64_t rows) {
  NormRange r;
  r.min_norm = std::numeric_limits<float>::infinity();
  for (std::int64_t i = 0; i < rows; ++i) {
    const float n = norms[i];
    if (!std::isfinite(n))
      r.finite = false;
    else if (n > 0)
      r.min_norm = std::min(r.min_norm, n), r.max_norm = std::max(r.max_norm, n);
  }
  return r;
}

DeviceModel upload_model(const Model& m, bool pinned) {
  require_device();
  DeviceModel dm;
  dm.rows = m.rows;
  dm.dim = m.dim;
  dm.ld = m.ld;
  dm.vectors = DeviceBuffer(dm.vector_bytes(), "the model's vectors");
  dm.norms = DeviceBuffer(static_cast<std::size_t>(m.rows) * sizeof(float), "the model's norms");
  const std::size_t bytes = dm.vector_bytes();
  if (pinned) {
    // Two page-locked staging chunks: pack one while the other is in flight.
    constexpr std::size_t kChunk = 64u << 20;
    // Everything here owns itself, so a throw part-way leaks nothing; the stream goes first
    // and waits for its copies, so no copy still reads a staging chunk when it is freed.
    PinnedBuffer stage[2] = {PinnedBuffer(kChunk, "model upload staging"),
                             PinnedBuffer(kChunk, "model upload staging")};
    const Stream stream(cudaStreamNonBlocking);
    Event done[2] = {Event(Event::Timing::Off), Event(Event::Timing::Off)};
    const auto* src = reinterpret_cast<const char*>(m.vectors.data());
    auto* dst = dm.vectors.as<char>();
    int slot = 0;
    for (std::size_t off = 0; off < bytes; off += kChunk, slot ^= 1) {
      const std::size_t n = std::min(kChunk, bytes - off);
      if (off >= 2 * kChunk) CUDA_CHECK(cudaEventSynchronize(done[slot].get()));
      std::memcpy(stage[slot].as<char>(), src + off, n);
      CUDA_CHECK(cudaMemcpyAsync(dst + off, stage[slot].as<char>(), n, cudaMemcpyHostToDevice, stream));
      done[slot].record(stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
  } else {
    CUDA_CHECK(cudaMemcpy(dm.vectors.get(), m.vectors.data(), bytes, cudaMemcpyHostToDevice));
  }
  CUDA_CHECK(cudaMemcpy(dm.norms.get(), m.norms.data(), m.rows * sizeof(float), cudaMemcpyHostToDevice));
  return dm;
}

DeviceModel generate_synthetic_on_device(std::int64_t rows, int dim, std::uint64_t seed, std::int64_t first_row,
                                         const DataFamily& family) {
  require_device();
  DeviceModel dm;
  dm.rows = rows;
  dm.dim = dim;
  dm.ld = leading_dim(dim);
  dm.vectors = DeviceBuffer(dm.vector_bytes(), "the synthetic model's vectors");
  dm.norms = DeviceBuffer(static_cast<std::size_t>(rows) * sizeof(float), "the synthetic model's norms");
  const long long n = rows * dm.ld;
  synthetic_fill_kernel<<<blocks_for(n, kElementThreads), kElementThreads>>>(dm.vectors.as<float>(), rows, dim, dm.ld,
                                                                             seed, first_row, family);
  CUDA_CHECK_LAUNCH();
  row_norms_kernel<<<blocks_for(rows, kElementThreads), kElementThreads>>>(dm.vectors.as<float>(), rows, dim, dm.ld,
                                                                           dm.norms.as<float>());
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  return dm;
}

Model download_model(const DeviceModel& dm) {
  Model m;
  m.rows = dm.rows;
  m.dim = dm.dim;
  m.ld = dm.ld;
  m.norms.resize(static_cast<std::size_t>(dm.rows));
  m.vectors = AlignedFloats(static_cast<std::size_t>(dm.rows) * dm.ld);
  CUDA_CHECK(cudaMemcpy(m.vectors.data(), dm.vectors.get(), dm.vector_bytes(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(m.norms.data(), dm.norms.get(), dm.rows * sizeof(float), cudaMemcpyDeviceToHost));
  m.format = "device copy";
  return m;
}

}  // namespace distancies

namespace distancies {

const DeviceModel::Reduced& DeviceModel::reduced(Storage s) const {
  if (s == Storage::F32) throw Error("reduced(): f32 is the model itself");
  Reduced& r = s == Storage::F16 ? f16_ : s == Storage::BF16 ? bf16_ : i8_;
  bool& have = s == Storage::F16 ? have_f16_ : s == Storage::BF16 ? have_bf16_ : have_i8_;
  if (have) return r;
  r = s == Storage::I8 ? quantize_i8(std::move(r), nullptr) : convert_16bit(s, std::move(r), nullptr);
  have = true;
  return r;
}

// The int8 copy with its row scales, of the rows (mean null) or of the centred rows, re-filling
// `old`'s buffers where their size fits. Filled in, then returned: a throw part-way keeps nothing.
DeviceModel::Reduced DeviceModel::quantize_i8(Reduced old, const float* mean) const {
  Reduced fresh;
  const int rld = storage_leading_dim(Storage::I8, dim);
  fresh.data = reuse_or_allocate(std::move(old.data), static_cast<std::size_t>(rows) * rld, "the model's int8 copy");
  fresh.scale =
      reuse_or_allocate(std::move(old.scale), static_cast<std::size_t>(std::max<std::int64_t>(rows, 1)) * sizeof(float),
                        "the int8 row scales");
  if (mean)
    fresh.correction = reuse_or_allocate(std::move(old.correction),
                                         static_cast<std::size_t>(std::max<std::int64_t>(rows, 1)) * sizeof(float),
                                         "the int8 row corrections");
  if (rows > 0) {
    const int warps = 8;
    quantize_i8_kernel<signed char><<<static_cast<unsigned>((rows + warps - 1) / warps), warps * 32>>>(
        d_vectors(), rows, dim, ld, rld, fresh.data.as<signed char>(), fresh.scale.as<float>(), d_norms(), mean,
        mean ? fresh.correction.as<float>() : nullptr);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(0));  // this stream only: not a streamed chunk's copy in flight
  }
  fresh.min_norm = norm_range().min_norm;
  fresh.max_norm = norm_range().max_norm;
  return fresh;
}

// The 16-bit copy of the rows (mean null) or of the centred rows, re-filling `old`'s buffers
// where their size fits. Filled in, then returned: a throw part-way keeps nothing.
DeviceModel::Reduced DeviceModel::convert_16bit(Storage s, Reduced old, const float* mean) const {
  const int rld = reduced_leading_dim(dim);
  const long long n = rows * rld;
  Reduced fresh;
  fresh.data = reuse_or_allocate(std::move(old.data), static_cast<std::size_t>(n) * 2, "the model's 16-bit copy");
  fresh.flag = reuse_or_allocate(std::move(old.flag), sizeof(int), "conversion flag");
  const DeviceBuffer& flag = fresh.flag;
  CUDA_CHECK(cudaMemsetAsync(flag.get(), 0, sizeof(int), 0));
  const unsigned grid = blocks_for(n, kElementThreads);
  if (s == Storage::F16)
    convert_reduced_kernel<__half><<<grid, kElementThreads>>>(d_vectors(), rows, dim, ld, rld, fresh.data.as<__half>(),
                                                              flag.as<int>(), d_norms(), mean);
  else
    convert_reduced_kernel<__nv_bfloat16><<<grid, kElementThreads>>>(
        d_vectors(), rows, dim, ld, rld, fresh.data.as<__nv_bfloat16>(), flag.as<int>(), d_norms(), mean);
  CUDA_CHECK_LAUNCH();
  int out = 0;
  CUDA_CHECK(cudaMemcpy(&out, flag.get(), sizeof out, cudaMemcpyDeviceToHost));
  fresh.out_of_range = out != 0;
  fresh.min_norm = norm_range().min_norm;
  fresh.max_norm = norm_range().max_norm;
  return fresh;
}

const DeviceModel::TiledI8& DeviceModel::tiled_i8() const {
  if (have_tiled_i8_) return tiled_i8_;
  build_tiled_i8(tiled_i8_, nullptr, 0);
  have_tiled_i8_ = true;
  return tiled_i8_;
}

// The tiled int8 copy of the rows (mean null) or of the centred rows, into `slot`.
const DeviceModel::TiledI8& DeviceModel::build_tiled_i8(TiledI8& slot, const float* mean, bool projected) const {
  TiledI8 fresh;  // filled in, then kept: a throw part-way keeps nothing
  fresh.ldg = projected ? tiled_i8::projected_ldg(dim) : tiled_i8::plain_ldg(dim);
  fresh.extra = projected ? fresh.ldg - dim : 0;
  const std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(rows, 1));
  const std::size_t tiles = (n + tiled_i8::kTileRows - 1) / tiled_i8::kTileRows;
  fresh.codes = reuse_or_allocate(std::move(slot.codes), n * fresh.ldg, "the model's tiled int8 copy");
  fresh.order = reuse_or_allocate(std::move(slot.order), n * sizeof(int), "the tiled int8 copy's order");
  fresh.tiles = reuse_or_allocate(std::move(slot.tiles), tiles * sizeof(float4), "the tiled int8 copy's tiles");
  if (rows > 0) {
    if (rows > INT32_MAX) throw Error("the tiled int8 copy holds at most 2^31 - 1 rows");
    const int count = static_cast<int>(rows);
    DeviceBuffer keys(n * sizeof(float) * 2, "the tiled int8 copy's sort keys");
    DeviceBuffer index(n * sizeof(int), "the tiled int8 copy's sort");
    float* key_in = keys.as<float>();
    float* key_out = key_in + n;
    tiled_i8_keys_kernel<<<blocks_for(rows * 32, kElementThreads), kElementThreads>>>(
        d_vectors(), rows, dim, ld, d_norms(), mean, fresh.extra, key_in, index.as<int>());
    CUDA_CHECK_LAUNCH();
    std::size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, key_in, key_out, index.as<int>(),
                                               fresh.order.as<int>(), count));
    DeviceBuffer temp(std::max<std::size_t>(temp_bytes, 1), "the tiled int8 copy's sort scratch");
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, key_in, key_out, index.as<int>(),
                                               fresh.order.as<int>(), count));
    tiled_i8_codes_kernel<<<static_cast<unsigned>(tiles), tiled_i8::kThreads>>>(
        d_vectors(), rows, dim, ld, d_norms(), mean, fresh.extra, fresh.order.as<int>(), key_out, fresh.ldg,
        fresh.codes.as<signed char>(), fresh.tiles.as<float4>());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(0));  // before the scratch goes
  }
  slot = std::move(fresh);
  return slot;
}

const NormRange& DeviceModel::norm_range() const {
  if (have_range_) return range_;
  DeviceBuffer out(3 * sizeof(unsigned), "norm range");
  const unsigned init[3] = {0x7f800000u, 0u, 0u};  // min = +inf, max = 0, all finite
  CUDA_CHECK(cudaMemcpy(out.get(), init, sizeof init, cudaMemcpyHostToDevice));
  if (rows > 0) {
    norm_range_kernel<float><<<static_cast<unsigned>((rows + 255) / 256), 256>>>(d_norms(), rows, out.as<unsigned>());
    CUDA_CHECK_LAUNCH();
  }
  unsigned got[3];
  CUDA_CHECK(cudaMemcpy(got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
  std::memcpy(&range_.min_norm, &got[0], sizeof(float));
  std::memcpy(&range_.max_norm, &got[1], sizeof(float));
  range_.finite = got[2] == 0;
  have_range_ = true;
  return range_;
}

}  // namespace distancies
