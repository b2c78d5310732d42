#include "runtime/pinned_model.hpp"

#include <algorithm>
#include <utility>

#include "runtime/device_model.hpp"
#include "runtime/error.hpp"

namespace distancies {

HostRows HostRows::slice(std::int64_t lo, std::int64_t hi) const {
  if (lo < 0 || hi > rows || lo > hi) throw Error("HostRows::slice: rows out of range");
  HostRows s = *this;
  s.vectors = vectors + lo * ld;
  s.norms = norms + lo;
  s.rows = hi - lo;
  s.first = first + lo;
  return s;
}

HostRows host_rows(const Model& m) {
  HostRows r;
  r.vectors = m.vectors.data();
  r.norms = m.norms.data();
  r.rows = m.rows;
  r.dim = m.dim;
  r.ld = m.ld;
  r.range = host_norm_range(m.norms.data(), m.rows);
  return r;
}

PinnedModel::~PinnedModel() { release(); }

PinnedModel::PinnedModel(PinnedModel&& o) noexcept
    : rows_(std::exchange(o.rows_, HostRows{})),
      owned_vectors_(std::move(o.owned_vectors_)),
      owned_norms_(std::move(o.owned_norms_)) {
  for (int i = 0; i < 2; ++i) registered_[i] = std::exchange(o.registered_[i], nullptr);
}

PinnedModel& PinnedModel::operator=(PinnedModel&& o) noexcept {
  if (this != &o) {
    release();
    rows_ = std::exchange(o.rows_, HostRows{});
    owned_vectors_ = std::move(o.owned_vectors_);
    owned_norms_ = std::move(o.owned_norms_);
    for (int i = 0; i < 2; ++i) registered_[i] = std::exchange(o.registered_[i], nullptr);
  }
  return *this;
}

void PinnedModel::release() noexcept {
  for (void*& p : registered_)
    if (p) cudaHostUnregister(std::exchange(p, nullptr));
}

PinnedModel PinnedModel::register_model(const Model& m) {
  require_device();
  PinnedModel pm;
  pm.rows_ = host_rows(m);
  if (m.rows == 0) return pm;
  const std::pair<const void*, std::size_t> parts[2] = {
      {m.vectors.data(), static_cast<std::size_t>(m.rows) * m.ld * sizeof(float)},
      {m.norms.data(), static_cast<std::size_t>(m.rows) * sizeof(float)}};
  for (int i = 0; i < 2; ++i) {
    const cudaError_t e = cudaHostRegister(const_cast<void*>(parts[i].first), parts[i].second, cudaHostRegisterMapped);
    if (e == cudaErrorMemoryAllocation)
      throw OutOfMemory("cannot page-lock " + std::to_string(parts[i].second >> 20) +
                        " MiB of the model in host memory (cudaHostRegister: " + cudaGetErrorString(e) + ")");
    CUDA_CHECK(e);
    pm.registered_[i] = const_cast<void*>(parts[i].first);
  }
  return pm;
}

PinnedModel PinnedModel::synthetic(std::int64_t rows, int dim, std::uint64_t seed, const DataFamily& family) {
  require_device();
  PinnedModel pm;
  pm.rows_.rows = rows;
  pm.rows_.dim = dim;
  pm.rows_.ld = leading_dim(dim);
  pm.owned_vectors_ = PinnedBuffer(static_cast<std::size_t>(rows) * pm.rows_.ld * sizeof(float), "the synthetic model");
  pm.owned_norms_ = PinnedBuffer(static_cast<std::size_t>(std::max<std::int64_t>(rows, 1)) * sizeof(float),
                                 "the synthetic model's norms");
  // Blocks of 2^20 rows: generated and normed on the GPU (bit for bit the host generator), copied down.
  constexpr std::int64_t kBlock = std::int64_t(1) << 20;
  for (std::int64_t lo = 0; lo < rows; lo += kBlock) {
    const std::int64_t n = std::min(kBlock, rows - lo);
    const DeviceModel part = generate_synthetic_on_device(n, dim, seed, lo, family);
    CUDA_CHECK(cudaMemcpy(pm.owned_vectors_.as<float>() + lo * pm.rows_.ld, part.d_vectors(), part.vector_bytes(),
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(pm.owned_norms_.as<float>() + lo, part.d_norms(), n * sizeof(float), cudaMemcpyDeviceToHost));
  }
  pm.rows_.vectors = pm.owned_vectors_.as<float>();
  pm.rows_.norms = pm.owned_norms_.as<float>();
  pm.rows_.range = host_norm_range(pm.rows_.norms, rows);
  return pm;
}

}  // namespace distancies
