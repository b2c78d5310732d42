// A trivial model copy, added here and nowhere else: a device clone of the fp32 rows. The trivial
// scan (trivial_scan.cpp) scores from it, so the searcher must prepare it from its row before the
// pass; linked into test_registry with the registry-driven suites, it proves that a copy is one
// maker and one row: the catalog, the searcher's preparation, the copy suite (test_model_copies.cpp)
// and the bench's copy fixtures pick it up by themselves.
#include "trivial_copy.hpp"

#include <algorithm>
#include <memory>

#include "runtime/cuda_check.hpp"
#include "runtime/model.hpp"

namespace distancies::testing {
namespace {

struct Clone final : DeviceModel::Copy {
  DeviceBuffer rows;
  std::size_t bytes() const override { return rows.bytes(); }
};

std::unique_ptr<DeviceModel::Copy> make_clone(const DeviceModel& m, std::unique_ptr<DeviceModel::Copy>) {
  auto c = std::make_unique<Clone>();
  c->rows = DeviceBuffer(std::max<std::size_t>(m.vector_bytes(), 4), "the fp32 clone");
  if (m.vector_bytes())
    CUDA_CHECK(cudaMemcpy(c->rows.get(), m.d_vectors(), m.vector_bytes(), cudaMemcpyDeviceToDevice));
  return c;
}

}  // namespace

// Registered during static initialisation, before any suite asks the tables for their rows.
const ModelCopyRow& trivial_copy = add_model_copy(
    ModelCopyRow{kTrivialCopy, "test-only: a device clone of the fp32 rows", "beyond the study"}
        .holds([](long long rows, int dim) {
          return std::max<std::size_t>(static_cast<std::size_t>(rows) * leading_dim(dim) * sizeof(float), 4);
        })
        .made_by(make_clone));

const float* trivial_copy_rows(const DeviceModel& m) {
  return static_cast<const float*>(static_cast<const Clone&>(prepared_copy(m, trivial_copy)).rows.get());
}

}  // namespace distancies::testing
