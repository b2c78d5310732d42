// The matmul table: each row a launch of one kernel instantiation; the sweeps are generated.
#include <deque>
#include <string>
#include <tuple>
#include <utility>

#include "kernels/matmul/mma_f16_matmul.cuh"
#include "kernels/matmul/naive_matmul.cuh"
#include "kernels/matmul/shared_tile_matmul.cuh"
#include "kernels/matmul/tiled_matmul.cuh"
#include "kernels/matmul/tuned_sgemm.cuh"
#include "kernels/matmul/warp_tiled_sgemm.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/error.hpp"
#include "variants/matmul/registry.hpp"
#include "variants/matmul/wgmma_f16_matmul.hpp"
#include "variants/registry_model.hpp"

namespace distancies {
namespace {

dim3 grid_for(const MatmulArgs& a, int ty, int tx) {
  const int cols = kMatmulBlockSide * tx, rows = kMatmulBlockSide * ty;
  return dim3((a.n + cols - 1) / cols, (a.m + rows - 1) / rows);
}
const dim3 kBlock(kMatmulBlockSide, kMatmulBlockSide);

void launch_naive(const MatmulArgs& a, cudaStream_t s) {
  if (a.m == 0 || a.n == 0) return;
  naive_matmul_kernel<<<grid_for(a, 1, 1), kBlock, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}
template <int TY, int TX>
void launch_three_loop(const MatmulArgs& a, cudaStream_t s) {
  if (a.m == 0 || a.n == 0) return;
  three_loop_tiled_kernel<TY, TX><<<grid_for(a, TY, TX), kBlock, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}
template <int TY, int TX>
void launch_register_tile(const MatmulArgs& a, cudaStream_t s) {
  if (a.m == 0 || a.n == 0) return;
  register_tile_kernel<TY, TX><<<grid_for(a, TY, TX), kBlock, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}
template <int L>
void launch_register_length(const MatmulArgs& a, cudaStream_t s) {
  if (a.m == 0 || a.n == 0) return;
  register_length_kernel<L><<<grid_for(a, 2, 2), kBlock, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

// Generated rows own their names and descriptions here (rows hold const char*).
const char* keep(std::string s) {
  static std::deque<std::string> strings;
  strings.push_back(std::move(s));
  return strings.back().c_str();
}

template <int TY, int TX>
void launch_shared_tile(const MatmulArgs& a, cudaStream_t s) {
  if (a.m == 0 || a.n == 0) return;
  shared_tile_kernel<TY, TX><<<grid_for(a, TY, TX), kBlock, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

int tiles(const MatmulArgs& a, int bm, int bn) { return ((a.m + bm - 1) / bm) * ((a.n + bn - 1) / bn); }
bool on_16_bytes(const void* p) { return reinterpret_cast<unsigned long long>(p) % 16 == 0; }

void launch_warp_tiled_sgemm(const MatmulArgs& a, cudaStream_t s) {
  using namespace warp_sgemm;
  if (a.m == 0 || a.n == 0) return;
  const int blocks = tiles(a, kBM, kBN);
  if (a.k % 4 == 0 && a.n % 4 == 0 && on_16_bytes(a.a) && on_16_bytes(a.b) && on_16_bytes(a.c))
    warp_tiled_sgemm_kernel<true><<<blocks, kThreads, 0, s>>>(a);
  else
    warp_tiled_sgemm_kernel<false><<<blocks, kThreads, 0, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

// cp.async (and mma.sync m16n8k16) need compute capability 8.0: their kernels trap below it.
void require_sm80(const char* why) {
  int device = 0, major = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 8) throw Error(why);
}

template <class Cfg>
void launch_mma_f16(const MatmulArgs& a, cudaStream_t s) {
  if (!a.a16 || !a.b16 || a.lda16 < matmul_half_ld(a.k) || a.ldb16 < matmul_half_ld(a.n) || a.lda16 % 8 || a.ldb16 % 8)
    throw Error("mma_f16: needs the half copies of A and B with rows padded to 8 (MatmulArgs::a16, b16)");
  if (a.m == 0 || a.n == 0) return;
  require_sm80("mma_f16: needs compute capability 8.0 or newer (cp.async, mma.sync m16n8k16)");
  CUDA_CHECK(
      cudaFuncSetAttribute(mma_f16_matmul_kernel<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSharedBytes));
  mma_f16_matmul_kernel<Cfg><<<tiles(a, Cfg::kBM, Cfg::kBN), Cfg::kThreads, Cfg::kSharedBytes, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

// One row of the tensor-core family: its block tile, warps, K slice and pipeline depth.
template <class Cfg>
void add_mma_f16(registry::Table<MatmulVariant>& t, const char* name) {
  t.add({name,
         keep("FP16 tensor cores (mma.sync m16n8k16, fp32 sums): " + std::to_string(Cfg::kBM) + " x " +
              std::to_string(Cfg::kBN) + " a block, " + std::to_string(Cfg::kWarpM) + " x " +
              std::to_string(Cfg::kWarpN) + " a warp, " + std::to_string(Cfg::kBK) + "-step K slices in a " +
              std::to_string(Cfg::kStages) + "-stage cp.async pipeline"),
         "beyond the study", MatmulKind::TensorCore, Cfg::kMi * 2, Cfg::kNi * 2, 1, launch_mma_f16<Cfg>,
         reinterpret_cast<const void*>(mma_f16_matmul_kernel<Cfg>), MatmulPrecision::F16, Cfg::kThreads,
         Cfg::kSharedBytes});
}

// The vectorised path needs B's rows and C's float4s on 16 bytes; A is copied 4 bytes at a time.
template <class Cfg>
void launch_tuned_sgemm(const MatmulArgs& a, cudaStream_t s) {
  if (a.m == 0 || a.n == 0) return;
  require_sm80("tuned_sgemm: needs compute capability 8.0 or newer (cp.async)");
  const bool vec = a.n % 4 == 0 && on_16_bytes(a.b) && on_16_bytes(a.c);
  void (*kernel)(MatmulArgs) = vec ? tuned_sgemm_kernel<Cfg, true> : tuned_sgemm_kernel<Cfg, false>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSharedBytes));
  kernel<<<tiles(a, Cfg::kBM, Cfg::kBN), Cfg::kThreads, Cfg::kSharedBytes, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

// One row of the tuned SIMT family, named by its parameters: block BM x BN x BK, warp, thread
// tile, stages of the ring.
template <class Cfg>
void add_tuned_sgemm(registry::Table<MatmulVariant>& t) {
  auto x = [](int p, int q) { return std::to_string(p) + "x" + std::to_string(q); };
  t.add({keep("tuned_sgemm_" + x(Cfg::kBM, Cfg::kBN) + "x" + std::to_string(Cfg::kBK) + "_w" + x(Cfg::kWM, Cfg::kWN) +
              "_t" + x(Cfg::kTM, Cfg::kTN) + "_s" + std::to_string(Cfg::kStages)),
         keep("tuned SIMT SGEMM: " + x(Cfg::kBM, Cfg::kBN) + " a block of " + std::to_string(Cfg::kThreads) +
              " threads, " + x(Cfg::kWM, Cfg::kWN) + " a warp, " + x(Cfg::kTM, Cfg::kTN) + " a thread, " +
              std::to_string(Cfg::kBK) + "-step K slices in a " + std::to_string(Cfg::kStages) +
              "-stage cp.async ring, A transposed"),
         "beyond the study", MatmulKind::TunedWarpTile, Cfg::kTM, Cfg::kTN, 1, launch_tuned_sgemm<Cfg>,
         reinterpret_cast<const void*>(tuned_sgemm_kernel<Cfg, true>), MatmulPrecision::F32, Cfg::kThreads,
         Cfg::kSharedBytes});
}

template <class... Cfg>
void add_tuned_sgemm_rows(registry::Table<MatmulVariant>& t, std::tuple<Cfg...>*) {
  (add_tuned_sgemm<Cfg>(t), ...);
}

constexpr int kSides[] = {1, 2, 4, 8, 16, 32};
constexpr int kLengths[] = {1, 2, 4, 8, 16, 32, 64};

template <int I, int J>
void add_tile(registry::Table<MatmulVariant>& t) {
  constexpr int TY = kSides[I], TX = kSides[J];
  const std::string tile = std::to_string(TY) + "x" + std::to_string(TX);
  t.add({keep("register_tile_" + tile),
         keep("the study's tile with input registers: a thread computes " + tile + " of C from " + std::to_string(TY) +
              " + " + std::to_string(TX) + " register inputs per step of K"),
         "study", MatmulKind::RegisterTile, TY, TX, 1, launch_register_tile<TY, TX>,
         reinterpret_cast<const void*>(register_tile_kernel<TY, TX>)});
}
template <int I, int... J>
void add_tile_row(registry::Table<MatmulVariant>& t, std::integer_sequence<int, J...>) {
  (add_tile<I, J>(t), ...);
}
template <int... I>
void add_tiles(registry::Table<MatmulVariant>& t, std::integer_sequence<int, I...>) {
  (add_tile_row<I>(t, std::make_integer_sequence<int, 6>{}), ...);
}
template <int... I>
void add_lengths(registry::Table<MatmulVariant>& t, std::integer_sequence<int, I...>) {
  (t.add({keep("register_length_" + std::to_string(kLengths[I])),
          keep("the study's register length at tile 2x2: " + std::to_string(kLengths[I]) + " steps of K at once, " +
               std::to_string(2 * kLengths[I]) + " + " + std::to_string(2 * kLengths[I]) + " register inputs"),
          "study", MatmulKind::RegisterLength, 2, 2, kLengths[I], launch_register_length<kLengths[I]>,
          reinterpret_cast<const void*>(register_length_kernel<kLengths[I]>)}),
   ...);
}

}  // namespace

const char* matmul_kind_name(MatmulKind k) {
  switch (k) {
    case MatmulKind::Naive:
      return "naive";
    case MatmulKind::ThreeLoop:
      return "three-loop tile";
    case MatmulKind::RegisterTile:
      return "register tile";
    case MatmulKind::RegisterLength:
      return "register length";
    case MatmulKind::SharedTile:
      return "shared-memory tile";
    case MatmulKind::WarpTile:
      return "warp tile";
    case MatmulKind::TunedWarpTile:
      return "tuned warp tile";
    case MatmulKind::TensorCore:
      return "tensor cores";
    case MatmulKind::Warpgroup:
      return "warpgroup tensor cores";
  }
  return "?";
}

const registry::Table<MatmulVariant>& matmul_variants() {
  static const registry::Table<MatmulVariant> table = [] {
    registry::Table<MatmulVariant> t(
        "matmul", "matmul", "matmul variant",
        {
            {"naive", "the study's first kernel: one thread per element of C, operands from global memory", "study",
             MatmulKind::Naive, 1, 1, 1, launch_naive, reinterpret_cast<const void*>(naive_matmul_kernel)},
            {"three_loop_tile_4x4",
             "the study's counter-example: a 4x4 tile by three loops, every operand from global memory", "study",
             MatmulKind::ThreeLoop, 4, 4, 1, launch_three_loop<4, 4>,
             reinterpret_cast<const void*>(three_loop_tiled_kernel<4, 4>)},
            {"three_loop_tile_8x8", "the counter-example at the study's best tile, 8x8", "study", MatmulKind::ThreeLoop,
             8, 8, 1, launch_three_loop<8, 8>, reinterpret_cast<const void*>(three_loop_tiled_kernel<8, 8>)},
        });
    add_tiles(t, std::make_integer_sequence<int, 6>{});
    add_lengths(t, std::make_integer_sequence<int, 7>{});
    t.add({"shared_tile_4x4",
           "shared-memory tiling: a block stages 64 x 16 of A and 16 x 64 of B, each thread a 4x4 register tile",
           "beyond the study", MatmulKind::SharedTile, 4, 4, 1, launch_shared_tile<4, 4>,
           reinterpret_cast<const void*>(shared_tile_kernel<4, 4>)});
    t.add({"shared_tile_8x8",
           "shared-memory tiling at the study's best tile: 128 x 16 of A and 16 x 128 of B staged a block",
           "beyond the study", MatmulKind::SharedTile, 8, 8, 1, launch_shared_tile<8, 8>,
           reinterpret_cast<const void*>(shared_tile_kernel<8, 8>)});
    t.add({"warp_tiled_sgemm",
           "warp-tiled register-blocked SGEMM: 128 x 128 a block, 64 x 32 a warp, 8x8 a thread, double-buffered shared "
           "slices",
           "beyond the study", MatmulKind::WarpTile, 8, 8, 1, launch_warp_tiled_sgemm,
           reinterpret_cast<const void*>(warp_tiled_sgemm_kernel<true>), MatmulPrecision::F32, warp_sgemm::kThreads});
    add_tuned_sgemm_rows(t, static_cast<tuned_sgemm::Registered*>(nullptr));
    add_mma_f16<MmaF16Config<128, 128, 32, 2, 2, 4>>(t, "mma_f16_128x128");
    add_mma_f16<MmaF16Config<128, 256, 32, 2, 4, 4>>(t, "mma_f16_128x256");
    add_mma_f16<MmaF16Config<256, 128, 32, 4, 2, 4>>(t, "mma_f16_256x128");
    add_mma_f16<MmaF16Config<128, 256, 64, 2, 4, 3>>(t, "mma_f16_128x256_k64");
    add_mma_f16<MmaF16Config<256, 128, 64, 4, 2, 3>>(t, "mma_f16_256x128_k64");
    add_wgmma_f16_rows(t);
    return t;
  }();
  return table;
}

const MatmulVariant& matmul_variant(std::string_view name) { return matmul_variants().at(name); }

std::optional<Refusal> matmul_variant_refusal(const MatmulVariant& v) {
  if (v.needs_sm90a) return sm90a_refusal();
  return std::nullopt;
}

MatmulResources matmul_resources(const MatmulVariant& v) {
  MatmulResources r;
  cudaFuncAttributes fa{};
  CUDA_CHECK(cudaFuncGetAttributes(&fa, v.kernel));
  r.registers = fa.numRegs;
  r.local_bytes = static_cast<int>(fa.localSizeBytes);
  r.static_shared_bytes = static_cast<int>(fa.sharedSizeBytes);
  r.dynamic_shared_bytes = v.dynamic_shared_bytes;
  const int threads = v.threads;
  if (v.dynamic_shared_bytes > 0)
    CUDA_CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, v.dynamic_shared_bytes));
  CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, v.kernel, threads, v.dynamic_shared_bytes));
  int device = 0, max_threads = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerMultiProcessor, device));
  r.occupancy = max_threads > 0 ? double(r.blocks_per_sm * threads) / max_threads : 0.0;
  return r;
}

// The study's registry registrar (cmake/studies.cmake).
namespace registry {
void add_matmul_families(std::vector<Family>& out);
}

void registry::add_matmul_families(std::vector<Family>& out) {
  const Table<MatmulVariant>& t = matmul_variants();
  out.push_back({t.study(), t.family(), t.what(),
                 [&t] {
                   return views<MatmulVariant>(t, [](const MatmulVariant& v) {
                     return std::string(matmul_kind_name(v.kind)) + ", tile " + std::to_string(v.tile_y) + "x" +
                            std::to_string(v.tile_x) + (v.length > 1 ? ", length " + std::to_string(v.length) : "");
                   });
                 },
                 [&t] {
                   std::vector<std::string> out;
                   check_names(t, out);
                   for (const MatmulVariant& v : t)
                     if (!v.launch || !v.kernel)
                       out.push_back(std::string("matmul variant '") + v.name + "' has no launch");
                   return out;
                 }});
}

}  // namespace distancies
