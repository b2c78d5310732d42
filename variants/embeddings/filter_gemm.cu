// The filtered scan's warpgroup-MMA walk, host side: the TMA descriptors of the model and the
// queries (CuTe builds them through the runtime's driver entry point: no libcuda link), the
// block's shape from the batch, the launch. Compiled for sm_90a alone (wgmma, setmaxnreg).
#include "variants/embeddings/filter_gemm.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "harness/runtime/launch.hpp"

#if DISTANCIES_HAVE_CUTLASS
#include "kernels/embeddings/wgmma_filter.cuh"
#endif

namespace distancies {

#if DISTANCIES_HAVE_CUTLASS

namespace {

template <int kQueries>
void launch(FilterScanArgs f, int tile_stride, cudaStream_t s) {
  using namespace cute;
  using C = wgmma_filter::Config<kQueries>;
  f.qgroups = ceil_div(f.nq, kQueries);
  const int kblocks = ceil_div(f.ldg, wgmma_filter::kKBlock);
  // The last block's 16-column MMA steps that reach ldg: 3 where that saves one (D = 297 ... 304,
  // so D = 300), else all 4.
  const bool three = ceil_div(f.ldg - (kblocks - 1) * wgmma_filter::kKBlock, 16) == 3;
  // The warpgroups take turns at the MMAs (DISTANCIES_GEMM_ORDER=0: not, to measure what that
  // gains: 3.22 against 2.92 ms at B = 1,024, run 36).
  static const int ordered = [] {
    const char* env = std::getenv("DISTANCIES_GEMM_ORDER");
    return env != nullptr && std::string(env) == "0" ? 0 : 1;
  }();
  auto model = make_tensor(make_gmem_ptr(reinterpret_cast<const half_t*>(f.model)), make_shape(f.rows, f.ldg),
                           make_stride(f.ldg, Int<1>{}));
  auto queries = make_tensor(make_gmem_ptr(reinterpret_cast<const half_t*>(f.queries)), make_shape(f.nq, f.ldg),
                             make_stride(f.ldg, Int<1>{}));
  auto tma_rows = make_tma_atom(SM90_TMA_LOAD{}, model, typename C::RowLayout{}(_, _, 0),
                                Shape<Int<wgmma_filter::kRowTile>, Int<wgmma_filter::kKBlock>>{});
  auto tma_queries = make_tma_atom(SM90_TMA_LOAD{}, queries, typename C::QueryLayout{}(_, _, 0),
                                   Shape<Int<kQueries>, Int<wgmma_filter::kKBlock>>{});
  auto* kernel = three ? &wgmma_filter_kernel<kQueries, 3, decltype(tma_rows), decltype(tma_queries)>
                       : &wgmma_filter_kernel<kQueries, 4, decltype(tma_rows), decltype(tma_queries)>;
  const std::size_t smem = sizeof(typename C::Smem);
  allow_dynamic_smem(kernel, smem, "wgmma_filter_kernel");
  // One block an SM (the shared memory), a multiple of the query groups.
  const int parts = std::max(1, device_status().props.multiProcessorCount / f.qgroups);
  kernel<<<parts * f.qgroups, wgmma_filter::kThreads, smem, s>>>(f, kblocks, tile_stride, ordered, tma_rows, tma_queries);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

bool filter_gemm_fits(int ldg, int major, int minor) {
  return major == 9 && minor == 0 && ceil_div(ldg, wgmma_filter::kKBlock) <= wgmma_filter::kMaxKBlocks;
}

void filter_gemm_scan(FilterScanArgs f, int tile_stride, cudaStream_t s) {
  if (tile_stride < 1) throw Error("the wgmma walk's tile stride must be at least 1");
  // One block's queries: 64 or 128 where they hold the launch, else 256 (128 at B = 1,024: 4.50
  // against 3.62 ms, run 34).
  if (f.nq <= 64)
    launch<64>(f, tile_stride, s);
  else if (f.nq <= 128)
    launch<128>(f, tile_stride, s);
  else
    launch<256>(f, tile_stride, s);
}

#else  // no CUTLASS headers at configure time: the walk is not built

bool filter_gemm_fits(int, int, int) { return false; }
void filter_gemm_scan(FilterScanArgs, int, cudaStream_t) {
  throw Error("the filtered scan's wgmma walk was not built (no CUTLASS headers at configure time)");
}

#endif

}  // namespace distancies
