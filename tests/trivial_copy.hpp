// The trivial model copy of tests/trivial_copy.cpp, which the trivial scan reads.
#pragma once
#include "variants/embeddings/model_copies.hpp"

namespace distancies::testing {

constexpr const char* kTrivialCopy = "fp32_clone";
extern const ModelCopyRow& trivial_copy;
// Its rows (rows x ld floats), prepared before.
const float* trivial_copy_rows(const DeviceModel& m);

}  // namespace distancies::testing
