// The moments variants table and lookup by name.
#include <string>

#include "runtime/error.hpp"
#include "variants/moments/launch.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

const char* layout_name(MatrixLayout l) { return l == MatrixLayout::RowMajor ? "row-major" : "column-major"; }
const char* accumulation_name(Accumulation a) { return a == Accumulation::F32 ? "fp32" : "fp64"; }

void* MomentsScratch::get(std::size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (buf_.bytes() < bytes) buf_ = DeviceBuffer(bytes, "moments scratch");
  return buf_.get();
}

const registry::Table<MomentsVariant>& moments_variants() {
  using L = MatrixLayout;
  using A = Accumulation;
  static const registry::Table<MomentsVariant> table(
      "moments", "moments", "moments variant",
      {
          {"two_pass",
           "the study's Pebay two-pass, four kernels: means, then central sums with the binomial correction", "study",
           L::RowMajor, A::F32, 2, launch_two_pass_corrected},
          {"two_pass_uncorrected",
           "the study's two-pass without the correction term (central sums about an inexact mean)", "study",
           L::RowMajor, A::F32, 2, launch_two_pass_uncorrected},
          {"two_pass_f64", "the study's two-pass with fp64 sums", "beyond the study", L::RowMajor, A::F64, 2,
           launch_two_pass_f64},
          {"one_pass", "one read: per-thread shifted power sums, Chan/Pebay pairwise merges, warp-shuffle levels",
           "beyond the study", L::RowMajor, A::F32, 1, launch_one_pass},
          {"one_pass_shared_merge", "one_pass with every merge level in shared memory (no shuffles)",
           "beyond the study", L::RowMajor, A::F32, 1, launch_one_pass_shared_merge},
          {"one_pass_f64", "one_pass with fp64 accumulation and merges", "beyond the study", L::RowMajor, A::F64, 1,
           launch_one_pass_f64},
          {"one_pass_colmajor", "one_pass over a column-major matrix: a block per column, contiguous reads",
           "beyond the study", L::ColumnMajor, A::F32, 1, launch_one_pass_colmajor},
      });
  return table;
}

const MomentsVariant& moments_variant(std::string_view name) { return moments_variants().at(name); }

// The study's registry registrar (cmake/studies.cmake).
namespace registry {
void add_moments_families(std::vector<Family>& out);
}

void registry::add_moments_families(std::vector<Family>& out) {
  const Table<MomentsVariant>& t = moments_variants();
  out.push_back({t.study(), t.family(), t.what(),
                 [&t] {
                   return views<MomentsVariant>(t, [](const MomentsVariant& v) {
                     return std::string(layout_name(v.layout)) + ", " + accumulation_name(v.accumulation) + ", " +
                            std::to_string(v.passes) + (v.passes == 1 ? " pass" : " passes");
                   });
                 },
                 [&t] {
                   std::vector<std::string> out;
                   check_names(t, out);
                   for (const MomentsVariant& v : t)
                     if (!v.launch) out.push_back(std::string("moments variant '") + v.name + "' has no launch");
                   return out;
                 }});
}

}  // namespace distancies
