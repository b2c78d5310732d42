// The Hopper FP16 matmul's rows, host side: the operands' TMA descriptors (cuTensorMapEncodeTiled
// through the runtime's driver entry point: nothing links libcuda), the persistent launch (with
// a cluster dimension for the cluster rows), the rows. Compiled for sm_90a alone
// (variants/matmul/CMakeLists.txt): the kernel's instructions exist there only, and only compute
// capability 9.0 runs it.
#include "variants/matmul/wgmma_f16_matmul.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "kernels/matmul/wgmma_f16_matmul.cuh"
#include "runtime/cuda_check.hpp"

namespace distancies {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
#else
    CUDA_CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &found));
#endif
    if (found != cudaDriverEntryPointSuccess || p == nullptr)
      throw Error("wgmma_f16: the CUDA driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A row-major half matrix (rows x cols, rows ld halves apart) read in boxes of box_rows x 64
// halves (128 bytes: one swizzled row), 128-byte swizzled; boxes past the edges read zeros.
CUtensorMap tensor_map(const __half* base, int rows, int cols, int ld, int box_rows, const char* what) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(ld) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(wgmma::kBBoxCols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t unit[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<__half*>(base), dims, strides,
                                    box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(std::string("wgmma_f16: cuTensorMapEncodeTiled refused ") + what + " (" + std::to_string(rows) + " x " +
                std::to_string(cols) + ", ld " + std::to_string(ld) + ", box " + std::to_string(box_rows) +
                " x 64): CUresult " + std::to_string(static_cast<int>(r)));
  return map;
}

// DISTANCIES_WGMMA_BLOCKS=N caps the persistent grid (N = 1: one block walks every tile, for
// debugging; the cluster rows keep at least one whole cluster); 0: no cap.
long blocks_cap() {
  const char* env = std::getenv("DISTANCIES_WGMMA_BLOCKS");
  if (!env) return 0;
  char* end = nullptr;
  const long cap = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || cap < 1)
    throw Error(std::string("DISTANCIES_WGMMA_BLOCKS must be a positive integer, not '") + env + "'");
  return cap;
}

// Blocks of the persistent grid: one an SM (the ring fills the shared memory), no more than the
// tiles.
int grid_blocks(int tiles) {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  int blocks = std::min(tiles, sms);
  if (const long cap = blocks_cap()) blocks = static_cast<int>(std::min<long>(blocks, cap));
  return blocks;
}

// The cluster rows: as many clusters as the device holds at once (the occupancy calculator: a
// GPC's SMs need not pair up), no more than the tile units; the launch's cluster dimension.
template <class Cfg>
cudaLaunchConfig_t cluster_config(int units, cudaLaunchAttribute* attr, cudaStream_t s) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(Cfg::kCluster);
  cfg.blockDim = dim3(Cfg::kThreads);
  cfg.dynamicSmemBytes = Cfg::kSharedBytes;
  cfg.stream = s;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = Cfg::kCluster;
  attr->val.clusterDim.y = attr->val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  // Asked once a device, not at every launch: the timed launches pay no occupancy query.
  static int device_seen = -1, max_clusters = 0;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  if (device != device_seen) {
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&max_clusters, wgmma_f16_matmul_kernel<Cfg>, &cfg));
    device_seen = device;
  }
  int clusters = max_clusters;
  if (clusters < 1)
    throw Error("wgmma_f16: no cluster of " + std::to_string(Cfg::kCluster) + " blocks with " +
                std::to_string(Cfg::kSharedBytes) + " bytes of shared memory each fits on this device");
  clusters = std::min(clusters, units);
  if (const long cap = blocks_cap())
    clusters = static_cast<int>(std::max<long>(1, std::min<long>(clusters, cap / Cfg::kCluster)));
  cfg.gridDim = dim3(clusters * Cfg::kCluster);
  return cfg;
}

template <class Cfg>
void launch_kernel(const CUtensorMap& ta, const CUtensorMap& tb, const MatmulArgs& a, cudaStream_t s) {
  auto* kernel = wgmma_f16_matmul_kernel<Cfg>;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSharedBytes));
  const int tiles_m = (a.m + Cfg::kBM - 1) / Cfg::kBM, tiles_n = (a.n + Cfg::kBN - 1) / Cfg::kBN;
  if constexpr (Cfg::kCluster == 1) {
    kernel<<<grid_blocks(tiles_m * tiles_n), Cfg::kThreads, Cfg::kSharedBytes, s>>>(ta, tb, a.c, a.m, a.n, a.k);
  } else {
    cudaLaunchAttribute attr{};
    const cudaLaunchConfig_t cfg =
        cluster_config<Cfg>(wgmma::cluster_units_m(tiles_m, Cfg::kCluster) * tiles_n, &attr, s);
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, ta, tb, a.c, a.m, a.n, a.k));
  }
  CUDA_CHECK_LAUNCH();
}

template <class Cfg>
void launch_wgmma_f16(const MatmulArgs& a, cudaStream_t s) {
  if (!a.a16 || !a.b16 || a.lda16 < matmul_half_ld(a.k) || a.ldb16 < matmul_half_ld(a.n) || a.lda16 % 8 || a.ldb16 % 8)
    throw Error("wgmma_f16: needs the half copies of A and B with rows padded to 8 (MatmulArgs::a16, b16)");
  if (a.m == 0 || a.n == 0) return;
  if (const auto no = sm90a_refusal()) throw Error("wgmma_f16: " + no->why);
  if (a.k == 0) {  // TMA takes no empty tensor: C = 0 directly
    CUDA_CHECK(cudaMemsetAsync(a.c, 0, static_cast<std::size_t>(a.m) * a.n * sizeof(float), s));
    return;
  }
  if (reinterpret_cast<std::uintptr_t>(a.a16) % 16 || reinterpret_cast<std::uintptr_t>(a.b16) % 16)
    throw Error("wgmma_f16: TMA needs the half copies on 16 bytes");
  const CUtensorMap ta = tensor_map(a.a16, a.m, a.k, a.lda16, Cfg::kBM, "A");
  const CUtensorMap tb = tensor_map(a.b16, a.k, a.n, a.ldb16, wgmma::kSliceK, "B");
  launch_kernel<Cfg>(ta, tb, a, s);
}

template <class Cfg>
MatmulVariant wgmma_row(const char* name, const char* description) {
  MatmulVariant v{name,
                  description,
                  "beyond the study",
                  MatmulKind::Warpgroup,
                  2 * Cfg::kMmas,  // a consumer thread's rows of C ...
                  Cfg::kBN / 4,    // ... and columns (accumulator_coord)
                  1,
                  launch_wgmma_f16<Cfg>,
                  reinterpret_cast<const void*>(wgmma_f16_matmul_kernel<Cfg>),
                  MatmulPrecision::F16,
                  Cfg::kThreads,
                  Cfg::kSharedBytes};
  v.needs_sm90a = true;
  return v;
}

}  // namespace

std::optional<Refusal> sm90a_refusal() {
  int device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major == 9 && minor == 0) return std::nullopt;
  return Refusal{"needs an sm_90a device (compute capability 9.0: H100, H200; wgmma, TMA, setmaxnreg), this one is " +
                 std::to_string(major) + "." + std::to_string(minor)};
}

void add_wgmma_f16_rows(registry::Table<MatmulVariant>& t) {
  using wgmma::WgmmaConfig;
  t.add(wgmma_row<WgmmaConfig<128, 256, 4>>(
      "wgmma_f16_128x256",
      "FP16 tensor cores (wgmma m64n256k16 from shared memory, fp32 sums): 128 x 256 a block, two consumer warpgroups "
      "of "
      "64 x 256 and a TMA producer warpgroup, 64-step K slices in a 4-stage ring (128-byte swizzle, mbarriers), "
      "persistent"));
  t.add(wgmma_row<WgmmaConfig<256, 128, 4>>(
      "wgmma_f16_256x128",
      "FP16 tensor cores (wgmma m64n128k16, fp32 sums): 256 x 128 a block, two consumer warpgroups of 128 x 128 (two "
      "wgmmas a step) and a TMA producer warpgroup, 64-step K slices in a 4-stage ring, persistent"));
  t.add(wgmma_row<WgmmaConfig<128, 128, 6>>(
      "wgmma_f16_128x128",
      "FP16 tensor cores (wgmma m64n128k16, fp32 sums): 128 x 128 a block, two consumer warpgroups of 64 x 128 and a "
      "TMA producer warpgroup, 64-step K slices in a 6-stage ring, persistent"));
  t.add(wgmma_row<WgmmaConfig<128, 256, 4, 2>>(
      "wgmma_f16_128x256_c2",
      "wgmma_f16_128x256 in clusters of 2 blocks along M (two 128 x 256 tiles sharing B's slices): each block's "
      "producer copies half of B's 64-column boxes and multicasts them to both (TMA multicast), halving B's L2 "
      "reads; a stage is freed by the consumers of both blocks; persistent over pairs of tiles"));
  t.add(wgmma_row<WgmmaConfig<128, 128, 6, 2>>(
      "wgmma_f16_128x128_c2",
      "wgmma_f16_128x128 in clusters of 2 blocks along M (two 128 x 128 tiles sharing B's slices): each block's "
      "producer copies one of B's two 64-column boxes and multicasts it to both (TMA multicast); 6-stage ring, "
      "persistent over pairs of tiles"));
  using wgmma::PingpongConfig;
  t.add(wgmma_row<PingpongConfig<64, 256, 5>>(
      "wgmma_f16_pingpong_64x256",
      "FP16 tensor cores (wgmma m64n256k16, fp32 sums), ping-pong consumers: each of two consumer warpgroups owns "
      "a whole 64 x 256 tile, alternate tiles of the persistent walk, their mainloops taking turns (named barriers) so "
      "one stores C while the other multiplies; a TMA producer warpgroup, 64-step K slices in a 5-stage ring"));
  t.add(wgmma_row<PingpongConfig<128, 128, 7>>(
      "wgmma_f16_pingpong_128x128",
      "FP16 tensor cores (wgmma m64n128k16, fp32 sums), ping-pong consumers: each of two consumer warpgroups owns "
      "a whole 128 x 128 tile (two wgmmas a step), alternate tiles, mainloops taking turns so one stores C while "
      "the other multiplies; a TMA producer warpgroup, 64-step K slices in a 7-stage ring"));
}

}  // namespace distancies
