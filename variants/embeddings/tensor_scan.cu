// The fused tensor-core batch scan, host side: the launch shape (queries a launch, tile rows,
// tiles in flight, blocks per SM) that fits shared memory, the launches over the batch, and its
// registered row (fused_tensor_core).
#include <cmath>
#include <string>
#include <vector>

#include "kernels/embeddings/tensor_scan_topk.cuh"
#include "runtime/launch.hpp"
#include "variants/embeddings/batch_scans.hpp"

namespace distancies {
namespace {

using Policy = policy::Active::TensorScan;
constexpr int kMaxGroups = 8;       // 16-query groups a launch: the kernel's instances (kernel_groups)
constexpr int kSeedThreads = 1024;  // select_from_lists_block's pool needs 1,024
static_assert(Policy::kWarps == tensor_scan::kWarps, "the kernel's warps are the policy's");

struct Shape {
  int groups = 0;     // 16-query groups a launch holds (1, 2, 4 or 8); 0: nothing fits
  int tile_rows = 0;  // 64 or 32
  int stages = 0;     // tiles in flight, 2 ... kMaxStages
  int per_sm = 0;     // blocks per SM
  std::size_t smem = 0;
};

int smem_ldk(int dim) { return round_up(reduced_leading_dim(dim), 16) + 8; }

// The most queries a launch can hold (up to what the batch needs). For them, two blocks per SM
// where two fit (one block's tensor-core phase overlaps the other's selection), else one; and
// the tile size that keeps the most rows in flight ((stages - 1) x tile rows, 64-row tiles on a tie).
Shape shape_for(int batch, int dim, int K) {
  const cudaDeviceProp& props = device_status().props;
  const int ldk = smem_ldk(dim);
  int want = 1;
  while (want < kMaxGroups && 16 * want < batch) want *= 2;
  for (int g = want; g >= 1; g /= 2)
    for (int per_sm = Policy::kBlocksPerSm; per_sm >= 1; --per_sm) {
      const std::size_t limit = std::min<std::size_t>(
          props.sharedMemPerBlockOptin, props.sharedMemPerMultiprocessor / per_sm - props.reservedSharedMemPerBlock);
      Shape best;
      for (int tile : {64, 32}) {
        const std::size_t fixed = tensor_scan::smem_bytes(g, tile, 0, ldk, K);
        if (fixed >= limit) continue;
        const int stages = static_cast<int>(
            std::min<std::size_t>(Policy::kMaxStages, (limit - fixed) / tensor_scan::tile_bytes(tile, ldk)));
        if (stages < 2) continue;
        if (best.groups == 0 || (stages - 1) * tile > (best.stages - 1) * best.tile_rows)
          best = {g, tile, stages, per_sm, tensor_scan::smem_bytes(g, tile, stages, ldk, K)};
      }
      if (best.groups > 0) return best;
    }
  return {};
}

using Kernel = void (*)(TensorScanArgs);

template <int kTileRows>
Kernel kernel_groups(int groups) {
  switch (groups) {
    case 1:
      return tensor_scan_topk_kernel<1, kTileRows>;
    case 2:
      return tensor_scan_topk_kernel<2, kTileRows>;
    case 4:
      return tensor_scan_topk_kernel<4, kTileRows>;
    default:
      return tensor_scan_topk_kernel<8, kTileRows>;
  }
}

// The kernel of a shape, allowed its shared memory.
Kernel kernel_for(const Shape& sh) {
  Kernel k = sh.tile_rows == 64 ? kernel_groups<64>(sh.groups) : kernel_groups<32>(sh.groups);
  allow_dynamic_smem(k, sh.smem, "tensor_scan_topk_kernel");
  return k;
}

// Blocks of a launch: the shape's per SM, as many as registers and shared memory really allow.
int blocks_for(const Shape& sh) {
  int fit = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel_for(sh), Policy::kWarps * 32, sh.smem));
  if (fit < 1)
    throw Error("tensor_scan_topk_kernel cannot run a block with " + std::to_string(sh.smem) +
                " bytes of shared memory");
  return device_status().props.multiProcessorCount * std::min(fit, sh.per_sm);
}

}  // namespace

int tensor_scan_max_queries() { return 16 * kMaxGroups; }

int tensor_scan_blocks(int batch, int dim, int K) {
  const Shape sh = shape_for(batch, dim, K);
  return sh.groups > 0 ? blocks_for(sh) : 1;
}

namespace {
// The seeding pass's sample: one tile a block.
long long sample_rows(const Shape& sh, int blocks) { return static_cast<long long>(blocks) * sh.tile_rows; }
bool seeds(const Shape& sh, int blocks, long long rows) {
  return rows >= Policy::kSeedSamples * sample_rows(sh, blocks);
}
}  // namespace

bool tensor_scan_seeds(int batch, int dim, int K, long long rows) {
  const Shape sh = shape_for(batch, dim, K);
  return sh.groups > 0 && seeds(sh, blocks_for(sh), rows);
}

std::optional<Refusal> tensor_scan_refusal(int dim, int K) {
  if (shape_for(1, dim, K).groups > 0) return std::nullopt;
  return Refusal{"a " + std::to_string(dim) + "-dimensional model's rows do not fit the fused scan's shared memory"};
}

namespace {

// Every query scored against every row by tensor_scan_topk_kernel, 16 to 128 queries a launch;
// leaves the lists batch_rerank reads.
void tensor_scan_tiles(const ScanStreams& io, const BatchScanArgs& a) {
  cudaStream_t s = io.stream;
  if (a.batch == 0) return;
  if (a.input != GemmInput::F16) throw Error("the fused tensor-core scan reads the fp16 copy");
  const Shape sh = shape_for(a.batch, a.exact.dim, a.K);
  if (sh.groups == 0) throw Error(tensor_scan_refusal(a.exact.dim, a.K)->why);
  const int blocks = blocks_for(sh);
  if (a.slices != blocks) throw Error("fused scan lists: one slice per block expected");
  const Kernel kernel = kernel_for(sh);
  const int per_launch = 16 * sh.groups;
  // Worth it only where the model is many samples long, and with a finite bound to lower by.
  const bool seeded = seeds(sh, blocks, a.exact.rows) && std::isfinite(a.error_bound) && a.error_bound >= 0;
  for (int q0 = 0; q0 < a.batch; q0 += per_launch) {
    TensorScanArgs t;
    t.model = static_cast<const __half*>(a.model);
    t.ldg = a.ldg;
    t.rows = a.exact.rows;
    t.inv_norms = a.inv_norms;
    t.queries = static_cast<const __half*>(a.queries_g) + static_cast<std::size_t>(q0) * a.ldg;
    t.nq = std::min(per_launch, a.batch - q0);
    t.ldk = smem_ldk(a.exact.dim);
    t.stages = sh.stages;
    const std::size_t first = static_cast<std::size_t>(q0) * a.slices * a.K;
    t.lists = SliceLists{a.lists_s + first, a.lists_r + first, a.slices, a.K};
    t.thresholds = a.thresholds + q0;
    if (seeded) {
      TensorScanArgs first_rows = t;
      first_rows.rows = static_cast<int>(sample_rows(sh, blocks));
      kernel<<<blocks, Policy::kWarps * 32, sh.smem, s>>>(first_rows);
      CUDA_CHECK_LAUNCH();
      seed_thresholds_kernel<kSeedThreads>
          <<<t.nq, kSeedThreads, 0, s>>>(t.lists, 2.0f * a.error_bound * (1.0f + 0x1p-20f), t.thresholds);
      CUDA_CHECK_LAUNCH();
    }
    kernel<<<blocks, Policy::kWarps * 32, sh.smem, s>>>(t);
    CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

BatchScanRow fused_tensor_core_scan() {
  BatchScanRow r{"fused_tensor_core",
                 "WMMA fp16 tiles scored against up to 128 queries held on chip; each block keeps its lists in shared "
                 "memory, thresholds shared per query",
                 "beyond the study"};
  r.refusal = [](int dim, int K, int) { return tensor_scan_refusal(dim, K); };
  r.slices = [](int batch, int, int dim, int K) { return tensor_scan_blocks(batch, dim, K); };
  r.scratch = [](const ScanShape& sh) {
    return std::vector<ScanBuffer>{{"shared thresholds", static_cast<std::size_t>(sh.batch) * sizeof(unsigned)}};
  };
  r.bind = [](const ScanShape&, void* const* scratch, BatchScanArgs& a) {
    a.thresholds = static_cast<unsigned*>(scratch[0]);
  };
  // Its blocks write every list whole; the thresholds start at the lowest key.
  r.prepare = [](const BatchScanArgs& a, cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(a.thresholds, 0, static_cast<std::size_t>(a.batch) * sizeof(unsigned), s));
  };
  r.score = tensor_scan_tiles;
  r.queries_per_read = tensor_scan_max_queries;
  return r;
}

}  // namespace distancies
