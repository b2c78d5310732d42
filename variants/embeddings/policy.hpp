// Tuning policies of the embeddings pipelines, grouped by the architecture they were measured on
// (CUB's habit: one policy struct per architecture, the dispatch picks one). Only sm_90 (H100)
// has been measured; every other card runs the sm_90 policy as a stated choice (policy_for()
// says so in `distancies device` and in the benchmark context), not H100 numbers by accident.
#pragma once
#include <cstddef>
#include <string>

namespace distancies::policy {

struct Sm90 {
  // The fp32 fused scan: 8 warps a block, 4 rows per warp in flight, 3 loads per lane per row
  // (D <= 384 per round), 2 blocks per SM (3 would cap registers at 80 and spill).
  struct FusedScan {
    static constexpr int kWarps = 8, kRows = 4, kSegs = 3, kBlocksPerSm = 2;
  };
  // The 16-bit scan: half a warp per row, 4 pairs of rows per warp (8 rows, 12 16-byte loads
  // per lane in flight), 3 loads per lane per row; the re-rank block is the list selection's
  // 1,024 threads (K <= 128 rows: <= 4 per warp).
  struct ReducedScan {
    static constexpr int kWarps = 8, kPairs = 4, kSegs = 3, kBlocksPerSm = 2, kRerankWarps = 32;
  };
  // The int8 scan: eight lanes per row, 3 loads per lane per row (D <= 384 per round), 16 rows
  // per warp (i8_scan_topk.cuh). Its earlier half-warp shape (probe runs archived in
  // results/manifest.json): 6 pairs x 2 blocks/SM 0.273 ms, 4 x 2 0.282, 8 x 2 0.286, 4 x 3 0.352.
  struct ReducedScanI8 {
    static constexpr int kWarps = 8, kRowsPerWarp = 16, kSegs = 3, kBlocksPerSm = 2;
  };
  // Warp-select over a similarity array: per-warp lists, 4 blocks per SM.
  struct WarpSelect {
    static constexpr int kWarps = 8, kBlocksPerSm = 4;
  };
  // Radix select: histogram block, and the ordering block (lists + scratch: 16 x 128 x 16 B = 32 KB).
  struct RadixSelect {
    static constexpr int kHistThreads = 256, kSelectWarps = 16;
  };
  // The study's two-kernel top-k: threads per block.
  struct StudyTopk {
    static constexpr int kThreads = 256;
  };
  // Pairwise merging of lists in one block.
  struct ListMerge {
    static constexpr int kWarps = 16;
  };
  // The read floor: threads per block, 16-byte loads in flight per thread.
  struct ReadFloor {
    static constexpr int kThreads = 512, kUnroll = 4;
  };
  // Batched search: selection and re-rank warps per block.
  struct Batch {
    static constexpr int kSelectWarps = 8, kRerankWarps = 32;  // the re-rank: the list selection's 1,024 threads
  };
  // The fused tensor-core batch scan: 8 warps; up to 2 blocks per SM where their shared memory
  // (queries, lists, up to 4 tiles of rows in flight) fits twice.
  struct TensorScan {
    static constexpr int kWarps = 8, kMaxStages = 4, kBlocksPerSm = 2;
    // The thresholds are seeded from a sample of one tile a block (tensor_scan_topk.cuh) where
    // the model holds at least this many such samples.
    static constexpr long long kSeedSamples = 16;
  };
  // The filtered mma batch scan (mma_filter_scan.cuh): 8 warps a block; up to 8 tiles of 16
  // queries a block (their fragments: 10 KB a tile at D = 300) and 1,024 queries a launch; a
  // warp takes two 16-row units at a time below 8 tiles, kUnitsAtMaxTiles at 8 (accumulators:
  // 64 registers a unit). The sample is about sqrt(K x rows) rows (then the filter pass appends
  // about as many candidates a query), seeded only where the model is at least kSeedRatio
  // samples long; each query's buffer holds kCapacityFactor times the expected candidates (more:
  // the fallback answers).
  struct FilterScan {
    static constexpr int kWarps = 8, kMaxTiles = 8, kUnitsAtMaxTiles = 1, kMaxQueries = 1024;
    static constexpr std::size_t kMaxQuerySmem = 160 * 1024;
    static constexpr int kSelectThreads = 1024, kSeedRatio = 8, kCapacityFactor = 4;
    // Up to 4 query tiles (B <= 64) a warp copies whole 8-row tiles (mma_filter_rows.cuh) where
    // their ring and the queries take at most kRowsMaxSmem (D = 300, 4 tiles: 196 KB).
    static constexpr int kRowsMaxTiles = 4;
    static constexpr std::size_t kRowsMaxSmem = 200 * 1024;
    // 8 query tiles (B > 64) on sm_90 with rows of at most 10 chunks (D <= 320): the 8 warps each
    // hold a tile's fragments in registers and share the rows (mma_filter_shared.cuh).
    static constexpr int kSharedChunks = 10;
    // The wgmma walk (wgmma_filter.cuh): its thresholds, once seeded, raised by a pass over
    // every kGemmRefineStride-th 64-row tile.
    static constexpr int kGemmRefineStride = 32;
    // The int8 walk in two passes from kI8TwoPassFrom queries: first every kI8FirstStride-th
    // tile, whose best candidates, recomputed exactly, raise the thresholds for the second pass
    // over the others (1: one pass). Below, where reading the copy bounds the walk, the second
    // launch costs more than the candidates it saves (docs/batch.md, "Seeds from exact
    // similarities": at B = 64 it gained on the strongly anisotropic families and lost on i.i.d.).
    static constexpr int kI8FirstStride = 4, kI8TwoPassFrom = 128;
    // The wgmma walk from this batch on (64-query blocks up to B = 64): on an H100 it took B = 32
    // and 64 in 0.58 and 0.59 ms where the rows walk took 0.72 and 0.96, but B = 16 in 0.57
    // where the rows walk took 0.54 (docs/batch.md).
    static constexpr int kGemmMinQueries = 17;
  };
  // Streaming from pinned host memory (variants/embeddings/stream_policy.hpp): chunk size and
  // slots from the stream_sweep/* fixtures (docs/scale.md); the share of a GPU memory budget the
  // slots may take (one query needs little else; a batch's score tiles need the rest).
  struct StreamChunks {
    static constexpr std::size_t kChunkBytes = std::size_t(256) << 20;
    // A chunk's copy is issued in pieces of this size, at most kPiecesInFlight ahead of the
    // engine, so that the chunk search's small uploads are not queued behind a whole chunk on
    // the host-to-device engine (it serves copies in the order they were issued).
    static constexpr std::size_t kCopyPieceBytes = std::size_t(16) << 20;
    static constexpr int kPiecesInFlight = 2;
    static constexpr int kBuffers = 2;
    static constexpr double kSlotShare = 0.85, kBatchSlotShare = 0.5;
  };
};

// The policy compiled in.
using Active = Sm90;
constexpr const char* kActiveName = "sm_90";
constexpr const char* kMeasuredOn = "NVIDIA H100 80GB HBM3";

// What a card of compute capability major.minor runs: "sm_90 policy (measured on ...)", and
// for any other card "sm_90 policy, not tuned for sm_XY".
std::string policy_for(int major, int minor);

}  // namespace distancies::policy
