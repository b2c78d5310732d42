// The moments variants table and lookup by name.
#include <string>

#include "harness/error.hpp"
#include "variants/moments/launch.hpp"

namespace distancies {

const char* layout_name(MatrixLayout l) { return l == MatrixLayout::RowMajor ? "row-major" : "column-major"; }
const char* accumulation_name(Accumulation a) { return a == Accumulation::F32 ? "fp32" : "fp64"; }

void* MomentsScratch::get(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (buf_.bytes() < bytes) buf_ = DeviceBuffer(bytes, "moments scratch");
  return buf_.get();
}

const std::vector<MomentsVariant>& moments_variants() {
  using L = MatrixLayout;
  using A = Accumulation;
  static const std::vector<MomentsVariant> table = {
      {"two_pass", "the study's Pebay two-pass, four kernels: means, then central sums with the binomial correction",
       "study", L::RowMajor, A::F32, 2, launch_two_pass_corrected},
      {"two_pass_uncorrected", "the study's two-pass without the correction term (central sums about an inexact mean)",
       "study", L::RowMajor, A::F32, 2, launch_two_pass_uncorrected},
      {"two_pass_f64", "the study's two-pass with fp64 sums", "beyond the study", L::RowMajor, A::F64, 2,
       launch_two_pass_f64},
      {"one_pass", "one read: per-thread shifted power sums, Chan/Pebay pairwise merges, warp-shuffle levels",
       "beyond the study", L::RowMajor, A::F32, 1, launch_one_pass},
      {"one_pass_shared_merge", "one_pass with every merge level in shared memory (no shuffles)", "beyond the study",
       L::RowMajor, A::F32, 1, launch_one_pass_shared_merge},
      {"one_pass_f64", "one_pass with fp64 accumulation and merges", "beyond the study", L::RowMajor, A::F64, 1,
       launch_one_pass_f64},
      {"one_pass_colmajor", "one_pass over a column-major matrix: a block per column, contiguous reads",
       "beyond the study", L::ColumnMajor, A::F32, 1, launch_one_pass_colmajor},
  };
  return table;
}

const MomentsVariant& moments_variant(std::string_view name) {
  std::string known;
  for (const MomentsVariant& v : moments_variants()) {
    if (name == v.name) return v;
    known += known.empty() ? "" : ", ";
    known += v.name;
  }
  throw Error("unknown moments variant '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace distancies
