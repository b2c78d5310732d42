// The filtered scan's warpgroup-MMA walk, host side: the TMA descriptors of the model and the
// queries (CuTe builds them through the runtime's driver entry point: no libcuda link), the
// block's shape from the batch, the launch; for the fp16 copy and for the tiled int8 copy.
// Compiled for sm_90a alone (wgmma, setmaxnreg).
#include "variants/embeddings/filter_gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "runtime/launch.hpp"

#if DISTANCIES_HAVE_CUTLASS
#include "kernels/embeddings/wgmma_filter.cuh"
#include "kernels/embeddings/wgmma_filter_f16.cuh"
#include "kernels/embeddings/wgmma_filter_i8.cuh"
#endif

namespace distancies {

#if DISTANCIES_HAVE_CUTLASS

namespace {

// The warpgroups take turns at the MMAs (DISTANCIES_GEMM_ORDER=0: not, to measure what that
// gains; docs/batch.md has the figures).
int mma_order() {
  static const int ordered = [] {
    const char* env = std::getenv("DISTANCIES_GEMM_ORDER");
    return env != nullptr && std::string(env) == "0" ? 0 : 1;
  }();
  return ordered;
}

// The kernel for a last column block of `steps` MMA steps: kShort where that is enough (saves
// the all-zero steps of D = 300: fp16 3 of 4, int8 2 of 4), else all 4.
template <class Epi, int kQueries, int kShort, class TmaRows, class TmaQueries>
auto kernel_for(int steps) {
  return steps <= kShort ? &wgmma_filter_kernel<Epi, kQueries, kShort, TmaRows, TmaQueries>
                         : &wgmma_filter_kernel<Epi, kQueries, Epi::kKBlock / Epi::kKStep, TmaRows, TmaQueries>;
}

// Returns the parts of the launch (blocks a query group).
template <class Epi, int kQueries, int kShort>
int launch(FilterScanArgs f, typename Epi::Args& x, const void* model, const void* queries, int tile_stride,
           cudaStream_t s) {
  using namespace cute;
  using C = wgmma_filter::Config<Epi, kQueries>;
  using E = typename Epi::Element;
  f.qgroups = ceil_div(f.nq, kQueries);
  const int kblocks = ceil_div(f.ldg, Epi::kKBlock);
  const int steps = ceil_div(f.ldg - (kblocks - 1) * Epi::kKBlock, Epi::kKStep);
  auto mmodel =
      make_tensor(make_gmem_ptr(static_cast<const E*>(model)), make_shape(f.rows, f.ldg), make_stride(f.ldg, Int<1>{}));
  auto mqueries =
      make_tensor(make_gmem_ptr(static_cast<const E*>(queries)), make_shape(f.nq, f.ldg), make_stride(f.ldg, Int<1>{}));
  auto tma_rows = make_tma_atom(SM90_TMA_LOAD{}, mmodel, typename C::RowLayout{}(_, _, 0),
                                Shape<Int<wgmma_filter::kRowTile>, Int<Epi::kKBlock>>{});
  auto tma_queries = make_tma_atom(SM90_TMA_LOAD{}, mqueries, typename C::QueryLayout{}(_, _, 0),
                                   Shape<Int<kQueries>, Int<Epi::kKBlock>>{});
  auto* kernel = kernel_for<Epi, kQueries, kShort, decltype(tma_rows), decltype(tma_queries)>(steps);
  const std::size_t smem = sizeof(typename C::Smem);
  allow_dynamic_smem(kernel, smem, "wgmma_filter_kernel");
  // One block an SM (the shared memory), a multiple of the query groups.
  const int parts = std::max(1, device_status().props.multiProcessorCount / f.qgroups);
  if constexpr (std::is_same_v<Epi, wgmma_filter::I8Filter>) {
    if (parts > tiled_i8::kMaxSegments) throw Error("the int8 walk's launch has more parts than its counts hold");
    x.seg = f.capacity / parts;  // each part's segment of a query's buffer
  }
  kernel<<<parts * f.qgroups, wgmma_filter::threads_for(kQueries), smem, s>>>(f, x, kblocks, tile_stride, mma_order(),
                                                                              tma_rows, tma_queries);
  CUDA_CHECK_LAUNCH();
  return parts;
}

// One block's queries: 16, 32, 64 or 128 where they hold the launch, else 256 (128 at B = 1,024
// measured slower; docs/batch.md). A small batch in a block of its own size: no MMA columns and
// epilogue compares spent on padding queries (DISTANCIES_WALK_MIN_QUERIES=64: the former floor).
template <class Epi, int kShort>
int launch_for_batch(const FilterScanArgs& f, typename Epi::Args& x, const void* model, const void* queries,
                     int tile_stride, cudaStream_t s) {
  if (tile_stride == 0 || tile_stride == -1) throw Error("the wgmma walk's tile stride must be at least 1 (or -2)");
  static const int least = [] {
    const char* env = std::getenv("DISTANCIES_WALK_MIN_QUERIES");
    return env ? std::atoi(env) : 16;
  }();
  if (f.nq <= 16 && least <= 16) return launch<Epi, 16, kShort>(f, x, model, queries, tile_stride, s);
  if (f.nq <= 32 && least <= 32) return launch<Epi, 32, kShort>(f, x, model, queries, tile_stride, s);
  if (f.nq <= 64) return launch<Epi, 64, kShort>(f, x, model, queries, tile_stride, s);
  if (f.nq <= 128) return launch<Epi, 128, kShort>(f, x, model, queries, tile_stride, s);
  return launch<Epi, 256, kShort>(f, x, model, queries, tile_stride, s);
}

}  // namespace

bool filter_gemm_fits(int ldg, int major, int minor) {
  return major == 9 && minor == 0 &&
         ceil_div(ldg, wgmma_filter::F16Filter::kKBlock) <= wgmma_filter::F16Filter::kMaxKBlocks;
}
bool filter_gemm_i8_fits(int ldg, int major, int minor) {
  return major == 9 && minor == 0 &&
         ceil_div(ldg, wgmma_filter::I8Filter::kKBlock) <= wgmma_filter::I8Filter::kMaxKBlocks;
}

void filter_gemm_scan(FilterScanArgs f, int tile_stride, cudaStream_t s) {
  wgmma_filter::F16Filter::Args none{};
  launch_for_batch<wgmma_filter::F16Filter, 3>(f, none, f.model, f.queries, tile_stride, s);
}

int filter_gemm_scan_i8(FilterScanArgs f, I8FilterArgs& x, const void* codes, const void* query_codes, int tile_stride,
                        cudaStream_t s) {
  return launch_for_batch<wgmma_filter::I8Filter, 2>(f, x, codes, query_codes, tile_stride, s);
}

#else  // no CUTLASS headers at configure time: the walk is not built

bool filter_gemm_fits(int, int, int) { return false; }
bool filter_gemm_i8_fits(int, int, int) { return false; }
void filter_gemm_scan(FilterScanArgs, int, cudaStream_t) {
  throw Error("the filtered scan's wgmma walk was not built (no CUTLASS headers at configure time)");
}
int filter_gemm_scan_i8(FilterScanArgs, I8FilterArgs&, const void*, const void*, int, cudaStream_t) {
  throw Error("the filtered scan's int8 wgmma walk was not built (no CUTLASS headers at configure time)");
}

#endif

}  // namespace distancies
