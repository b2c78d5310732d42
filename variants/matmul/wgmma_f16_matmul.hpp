// The Hopper FP16 matmul's rows (wgmma_f16_matmul.cu, built for sm_90a alone; the kernel is
// kernels/matmul/wgmma_f16_matmul.cuh), added to the matmul table by matmul_variants.cu.
#pragma once
#include <optional>

#include "runtime/error.hpp"
#include "variants/matmul/registry.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

void add_wgmma_f16_rows(registry::Table<MatmulVariant>& t);

// Why a row that needs sm_90a (wgmma, setmaxnreg) cannot run on the current device: empty on
// compute capability 9.0 (H100, H200), the only one sm_90a code runs on.
std::optional<Refusal> sm90a_refusal();

}  // namespace distancies
