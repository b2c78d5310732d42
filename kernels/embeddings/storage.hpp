// How the model's vectors are stored on the GPU.
#pragma once
#include "kernels/common/launch.hpp"

namespace distancies {

// I8: int8 with a per-row scale (row i is s_i * q_i, |q_ij| <= 127, s_i = max_j |x_ij| / 127).
enum class Storage { F32, F16, BF16, I8 };

inline const char* storage_name(Storage s) {
  return s == Storage::F32 ? "f32" : s == Storage::F16 ? "f16" : s == Storage::BF16 ? "bf16" : "i8";
}
// Bytes an element takes in that copy.
constexpr int storage_bytes(Storage s) { return s == Storage::F32 ? 4 : s == Storage::I8 ? 1 : 2; }

// Elements between row starts of a 16-bit copy: D rounded up to 8 (16-byte aligned rows).
constexpr int reduced_leading_dim(int dim) { return round_up(dim, 8); }
// The same for any copy: 16-byte aligned rows (an int8 copy pads D to 16).
constexpr int storage_leading_dim(Storage s, int dim) {
  return s == Storage::I8 ? round_up(dim, 16) : s == Storage::F32 ? round_up(dim, 4) : reduced_leading_dim(dim);
}

// What the tensor cores (or SGEMM) read in the batched pipelines.
enum class GemmInput {
  F32,   // cuBLAS SGEMM, fp32 inputs and arithmetic (no TF32): the tightest bound
  TF32,  // fp32 operands read as TF32 by the tensor cores (10-bit mantissa), fp32 accumulation
  BF16,  // the model's bf16 copy and bf16 queries, fp32 accumulation
  F16,   // the model's fp16 copy and fp16 queries, fp32 accumulation
};

inline const char* gemm_input_name(GemmInput g) {
  return g == GemmInput::F32 ? "fp32" : g == GemmInput::TF32 ? "tf32" : g == GemmInput::BF16 ? "bf16" : "fp16";
}

// The 16-bit copy a GEMM input reads, or F32 (the fp32 vectors themselves).
constexpr Storage gemm_storage(GemmInput g) {
  return g == GemmInput::BF16 ? Storage::BF16 : g == GemmInput::F16 ? Storage::F16 : Storage::F32;
}

}  // namespace distancies
