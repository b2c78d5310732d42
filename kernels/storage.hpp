// How the model's vectors are stored on the GPU.
#pragma once

namespace distancies {

enum class Storage { F32, F16, BF16 };

inline const char* storage_name(Storage s) { return s == Storage::F32 ? "f32" : s == Storage::F16 ? "f16" : "bf16"; }

// Elements between row starts of a 16-bit copy: D rounded up to 8 (16-byte aligned rows).
constexpr int reduced_leading_dim(int dim) { return (dim + 7) / 8 * 8; }

}  // namespace distancies
