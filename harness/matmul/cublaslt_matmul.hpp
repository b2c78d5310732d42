// The best cuBLAS can do for a product (docs/matmul.md, "The anchors"): cublasLtMatmul with a
// 32 MiB workspace (cuBLAS's recommendation for Hopper), the heuristic's top kCandidates
// algorithms each timed at set-up, and the fastest kept. FP16 inputs run both at K and at K
// rounded up to 8 over the half copies' zero rows (as CUTLASS and the mma kernels do), so an
// unaligned K cannot push cuBLAS onto a slow kernel. Products always sum in fp32.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/matmul/matmul_args.cuh"

namespace distancies {

// F16: fp16 inputs, fp32 C (what the mma kernels compute). F16OutF16: fp16 inputs, fp16 C (what
// a framework's fp16 matmul returns), its split-K partials still summed in fp32. Tf32: fp32
// inputs through TF32 tensor cores, fp32 C.
enum class CublasLtMode { F16, F16OutF16, Tf32 };
const char* cublaslt_mode_name(CublasLtMode m);
MatmulPrecision cublaslt_precision(CublasLtMode m);
int cublaslt_output_bits(CublasLtMode m);

// What the set-up chose: the counters of the fixture.
struct CublasLtChoice {
  int candidates = 0;  // algorithms timed (every K tried)
  int rank = -1;       // the winner's place in the heuristic's list at its K (0: its first choice)
  int k_run = 0;       // K as cuBLASLt saw it
  int algo_id = 0, tile_id = 0, stages_id = 0, splitk = 1, cluster_id = 0;
  std::size_t workspace_used = 0;
  double ms = 0;                                     // the winner's set-up time (median of a few calls)
  double first_choice_ms = 0;                        // the heuristic's first choice at the exact K
  double best_exact_k_ms = 0, best_padded_k_ms = 0;  // the fastest at K and at K rounded to 8 (0: not tried)
};

class CublasLtBest {
 public:
  static constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;
  static constexpr int kCandidates = 8;

  CublasLtBest();
  ~CublasLtBest();
  CublasLtBest(const CublasLtBest&) = delete;
  CublasLtBest& operator=(const CublasLtBest&) = delete;

  // Makes the half copies (FP16 modes), times the candidates and keeps the fastest; synchronous,
  // untimed by the caller. Call again whenever A or B change.
  const CublasLtChoice& prepare(const MatmulArgs& a, CublasLtMode mode, cudaStream_t s);
  // The chosen algorithm on the operands and mode prepare() saw (else throws). F16OutF16 writes
  // its C to half_c() (rows of ldc16() halves), the others to a.c.
  void run(const MatmulArgs& a, cudaStream_t s);
  const CublasLtChoice& choice() const;
  const __half* half_c() const;
  int ldc16() const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace distancies
