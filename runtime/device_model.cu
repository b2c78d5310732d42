#include "runtime/device_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "kernels/embeddings/norm_range.cuh"
#include "kernels/embeddings/synthetic_fill.cuh"
#include "runtime/launch.hpp"

namespace distancies {

namespace {
constexpr int kElementThreads = 256;  // the one-thread-per-element kernels below
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
  for (auto& [name, copy] : copies_) stale_[name] = std::move(copy);
  copies_.clear();
}

const DeviceModel::Copy* DeviceModel::find_copy(std::string_view name) const {
  const auto it = copies_.find(name);
  return it == copies_.end() ? nullptr : it->second.get();
}

const DeviceModel::Copy& DeviceModel::keep_copy(std::string_view name, std::unique_ptr<Copy> copy) {
  if (!copy) throw Error("keep_copy: no copy to keep for '" + std::string(name) + "'");
  std::unique_ptr<Copy>& slot = copies_[std::string(name)];
  slot = std::move(copy);
  return *slot;
}

std::unique_ptr<DeviceModel::Copy> DeviceModel::take_stale_copy(std::string_view name) {
  const auto it = stale_.find(name);
  if (it == stale_.end()) return nullptr;
  std::unique_ptr<Copy> old = std::move(it->second);
  stale_.erase(it);
  return old;
}

void DeviceModel::drop_copy(std::string_view name) {
  const auto it = copies_.find(name);
  if (it != copies_.end()) copies_.erase(it);
}

std::size_t DeviceModel::copy_bytes() const {
  std::size_t total = 0;
  for (const auto& [name, copy] : copies_) total += copy->bytes();
  return total;
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
  dm.measure_norm_range();
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
  dm.measure_norm_range();
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

const NormRange& DeviceModel::norm_range() const {
  if (!have_range_) throw std::logic_error("the model's norm range was read before it was measured");
  return range_;
}

void DeviceModel::measure_norm_range() {
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
}

}  // namespace distancies
