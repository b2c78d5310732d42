// The arithmetic a matmul variant or anchor runs in (docs/matmul.md: each has its error bound).
#pragma once

namespace distancies {

// F32: fp32 inputs, fp32 FMA. TF32 / F16: inputs rounded once to 10 explicit mantissa bits
// (TF32 by the tensor cores, F16 by the harness before the call), products summed in fp32.
enum class MatmulPrecision { F32, TF32, F16 };

}  // namespace distancies
