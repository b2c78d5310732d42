// Batched search without a score matrix: each block streams tiles of model rows from the fp16
// copy into shared memory (cp.async, several tiles in flight), scores every tile against up to
// 128 queries held in shared memory on the tensor cores (WMMA 16x16x16, fp32 accumulation),
// and offers the scores straight to each query's running top K in shared memory. Every row is
// read from memory once per launch; scores never leave the SM. The lists it leaves are the
// tile pipelines' SliceLists (one slice per block), so batch_rerank certifies them the same way.
#pragma once
#include <cuda_fp16.h>
#include <cuda_pipeline.h>
#include <mma.h>

#include "kernels/common/launch.hpp"
#include "kernels/common/list_select.cuh"
#include "kernels/common/warp_topk.cuh"
#include "kernels/embeddings/batch_select.cuh"

namespace distancies {

// What one launch reads and writes: `nq` <= 16 x groups queries of the batch.
struct TensorScanArgs {
  const __half* model;  // rows x ldg, the fp16 copy (ldg a multiple of 8)
  int ldg;
  int rows;
  const float* inv_norms;  // 1 / |x| per row
  const __half* queries;   // nq x ldg, normalised (batch_prepare)
  int nq;
  int ldk;               // shared-memory row stride: ldg rounded up to 16, plus 8 (no bank conflicts)
  int stages;            // tiles in flight
  SliceLists lists;      // this launch's first query's lists; slices == gridDim.x
  unsigned* thresholds;  // nq, cleared to 0: the best K-th of any block so far (ordered_key)
};

namespace tensor_scan {

constexpr int kWarps = 8;

// A float's order as an unsigned (for atomicMax); 0 is below every key.
__device__ __forceinline__ unsigned ordered_key(float f) { return ordered_bits(f); }

// A tile's MMA work is split over the K extent too when the tile has fewer 16 x 16 output blocks
// than warps (small batches), so that every warp multiplies and a tile's chain of MMAs is short.
__host__ __device__ constexpr int k_split(int groups, int tile_rows) {
  return groups * (tile_rows / 16) >= kWarps ? 1 : kWarps / (groups * (tile_rows / 16));
}

// Shared-memory layout, 128-byte aligned regions: queries, `stages` model tiles (each followed by
// its rows' 1 / |x|), k_split tiles of fp32 partial scores, then the lists (K sims, K rows a query).
__host__ __device__ constexpr std::size_t align128(std::size_t b) { return (b + 127) / 128 * 128; }
__host__ __device__ constexpr std::size_t query_bytes(int groups, int ldk) {
  return align128(16ull * groups * ldk * 2);
}
__host__ __device__ constexpr std::size_t tile_bytes(int tile_rows, int ldk) {
  return align128(1ull * tile_rows * ldk * 2) + align128(tile_rows * 4ull);
}
__host__ __device__ constexpr std::size_t score_bytes(int groups, int tile_rows) {
  return align128(16ull * groups * tile_rows * 4 * k_split(groups, tile_rows));
}
__host__ __device__ constexpr std::size_t smem_bytes(int groups, int tile_rows, int stages, int ldk, int K) {
  return query_bytes(groups, ldk) + stages * tile_bytes(tile_rows, ldk) + score_bytes(groups, tile_rows) +
         16ull * groups * K * 8;
}

// Tile `t`'s rows into stage buffer `dst` with 16-byte asynchronous copies, a warp a row, and
// their 1 / |x| after them (rows past the model are left as they are: never offered).
__device__ __forceinline__ void load_tile(const TensorScanArgs& a, long long t, int tile_rows, __half* dst) {
  const int chunks = a.ldg / 8;  // 16-byte pieces of a row
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long row0 = t * tile_rows;
  const int rows = static_cast<int>(min(static_cast<long long>(tile_rows), a.rows - row0));
  for (int r = warp; r < rows; r += kWarps) {
    const __half* src = a.model + (row0 + r) * a.ldg;
    for (int j = lane; j < chunks; j += 32) __pipeline_memcpy_async(dst + r * a.ldk + j * 8, src + j * 8, 16);
  }
  float* inv = reinterpret_cast<float*>(dst + align128(1ull * tile_rows * a.ldk * 2) / 2);
  for (int r = threadIdx.x; r < rows; r += kWarps * 32) __pipeline_memcpy_async(inv + r, a.inv_norms + row0 + r, 4);
}

}  // namespace tensor_scan

// kGroups x 16 queries, kTileRows model rows per tile. Warp w multiplies the tile's 16-row
// block w % (kTileRows / 16) against its query groups (one B fragment reused across them);
// then warp w keeps the lists of queries w, w + 8, ... (2 x kGroups of them).
template <int kGroups, int kTileRows>
__global__ void __launch_bounds__(tensor_scan::kWarps * 32, 1) tensor_scan_topk_kernel(TensorScanArgs a) {
  using namespace nvcuda;
  using namespace tensor_scan;
  constexpr int kNf = kTileRows / 16;  // 16-row blocks of a tile
  static_assert(kWarps % kNf == 0, "warps must split evenly over a tile's row blocks");
  constexpr int kSplit = k_split(kGroups, kTileRows);  // warps sharing one output block's K extent
  constexpr int kWarpsPerNf = kWarps / kNf / kSplit;
  constexpr int kAcc = (kGroups + kWarpsPerNf - 1) / kWarpsPerNf;  // query groups a warp multiplies
  constexpr int kMine = 2 * kGroups;                               // queries whose lists a warp keeps
  constexpr int kOffers = kTileRows / 32;                          // a tile's rows per lane
  constexpr int kScoreTile = 16 * kGroups * kTileRows;             // one partial score tile
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int K = a.lists.K;
  __half* q_s = reinterpret_cast<__half*>(smem);
  __half* tiles = reinterpret_cast<__half*>(smem + query_bytes(kGroups, a.ldk));
  const std::size_t tile_elems = tile_bytes(kTileRows, a.ldk) / 2;
  const std::size_t inv_at = align128(1ull * kTileRows * a.ldk * 2) / 2;  // a stage's 1 / |x|, in halves
  float* score_s =
      reinterpret_cast<float*>(smem + query_bytes(kGroups, a.ldk) + a.stages * tile_bytes(kTileRows, a.ldk));
  float* list_s = score_s + score_bytes(kGroups, kTileRows) / 4;
  int* list_r = reinterpret_cast<int*>(list_s + 16 * kGroups * K);
  const int ksteps = round_up(a.ldg, 16) / 16;  // the MMA's K extent; [ldg, 16 ksteps) is zero in queries and tiles
  const int ks = warp % kSplit;                 // this warp's share of the K extent
  const int ks_per = ceil_div(ksteps, kSplit);
  const int k_begin = ks * ks_per * 16, k_end = min(ksteps, (ks + 1) * ks_per) * 16;
  const int nf = (warp / kSplit) % kNf;
  const int qg0 = warp / kSplit / kNf;

  // Queries (zero rows past nq, zero columns past ldg), zero pad columns of every tile buffer.
  for (int i = threadIdx.x; i < 16 * kGroups * a.ldk; i += kWarps * 32) {
    const int q = i / a.ldk, j = i - q * a.ldk;
    q_s[i] = q < a.nq && j < a.ldg ? a.queries[static_cast<long long>(q) * a.ldg + j] : __float2half(0.0f);
  }
  for (int i = threadIdx.x; i < a.stages * kTileRows * (a.ldk - a.ldg); i += kWarps * 32) {
    const int per = a.ldk - a.ldg;
    const int r = i / per;
    tiles[(r / kTileRows) * tile_elems + (r % kTileRows) * a.ldk + a.ldg + (i - r * per)] = __float2half(0.0f);
  }
  WarpTopk top[kMine];
#pragma unroll
  for (int j = 0; j < kMine; ++j) {
    const int q = warp + kWarps * j;
    top[j] = WarpTopk{list_s + q * K, list_r + q * K, K};
    top[j].clear(lane);
  }

  const long long ntiles = ceil_div(static_cast<long long>(a.rows), kTileRows);
  const long long mine = blockIdx.x < ntiles ? ceil_div(ntiles - blockIdx.x, static_cast<long long>(gridDim.x)) : 0;
  for (int s = 0; s < a.stages - 1; ++s) {
    if (s < mine) load_tile(a, blockIdx.x + s * static_cast<long long>(gridDim.x), kTileRows, tiles + s * tile_elems);
    __pipeline_commit();  // one group per tile slot, empty or not, so that wait_prior counts tiles
  }
  for (long long i = 0; i < mine; ++i) {
    __pipeline_wait_prior(a.stages - 2);
    __syncthreads();  // tile i is in; every warp is done with tile i - 1's buffer and the scores
    const long long next = i + a.stages - 1;
    if (next < mine) load_tile(a, blockIdx.x + next * gridDim.x, kTileRows, tiles + (next % a.stages) * tile_elems);
    __pipeline_commit();
    const __half* tile = tiles + (i % a.stages) * tile_elems;
    // The shared thresholds are read now; their latency hides behind the tensor cores.
    unsigned shared_key[kMine];
#pragma unroll
    for (int j = 0; j < kMine; ++j)
      shared_key[j] = warp + kWarps * j < a.nq ? __ldcg(a.thresholds + warp + kWarps * j) : 0u;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[kAcc];
#pragma unroll
    for (int g = 0; g < kAcc; ++g) wmma::fill_fragment(acc[g], 0.0f);
    for (int kk = k_begin; kk < k_end; kk += 16) {
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> x;
      wmma::load_matrix_sync(x, tile + nf * 16 * a.ldk + kk, a.ldk);
#pragma unroll
      for (int g = 0; g < kAcc; ++g) {
        const int qg = qg0 + kWarpsPerNf * g;
        if (qg >= kGroups || qg * 16 >= a.nq) continue;  // warp-uniform
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> q;
        wmma::load_matrix_sync(q, q_s + qg * 16 * a.ldk + kk, a.ldk);
        wmma::mma_sync(acc[g], q, x, acc[g]);
      }
    }
#pragma unroll
    for (int g = 0; g < kAcc; ++g) {
      const int qg = qg0 + kWarpsPerNf * g;
      if (qg >= kGroups || qg * 16 >= a.nq) continue;
      wmma::store_matrix_sync(score_s + ks * kScoreTile + qg * 16 * kTileRows + nf * 16, acc[g], kTileRows,
                              wmma::mem_row_major);
    }
    __syncthreads();

    const long long row0 = (blockIdx.x + i * gridDim.x) * kTileRows;
    const float* inv_s = reinterpret_cast<const float*>(tile + inv_at);
    float inv[kOffers];
#pragma unroll
    for (int u = 0; u < kOffers; ++u) inv[u] = inv_s[u * 32 + lane];
      // A score below some block's K-th cannot be among the query's best K anywhere: one compare
      // against the best K-th published so far drops it (every block would otherwise insert about
      // K ln(its rows / K) candidates into its own list). A block publishes its K-th when it beats it.
#pragma unroll
    for (int j = 0; j < kMine; ++j) {
      const int q = warp + kWarps * j;
      if (q >= a.nq) continue;  // warp-uniform
      const unsigned floor_key = max(shared_key[j], ordered_key(top[j].last_sim));
#pragma unroll
      for (int u = 0; u < kOffers; ++u) {
        const int c = u * 32 + lane;
        float dot = score_s[q * kTileRows + c];
#pragma unroll
        for (int p = 1; p < kSplit; ++p) dot += score_s[p * kScoreTile + q * kTileRows + c];
        const bool in = row0 + c < a.rows;  // (past the model: stale rows and 1 / |x|)
        const float key = approx_rank_key(dot * inv[u]);
        const bool keep = in && ordered_key(key) >= floor_key;
        top[j].merge(key, static_cast<int>(row0 + c), keep, lane);
      }
      const unsigned mine_key = ordered_key(top[j].last_sim);
      if (lane == 0 && top[j].last_row != kSentinelRow && mine_key > floor_key) atomicMax(a.thresholds + q, mine_key);
    }
  }
  __pipeline_wait_prior(0);  // no copy outlives the block

#pragma unroll
  for (int j = 0; j < kMine; ++j) {
    const int q = warp + kWarps * j;
    if (q >= a.nq) continue;
    const long long at = (static_cast<long long>(q) * a.lists.slices + blockIdx.x) * K;
    for (int e = lane; e < K; e += 32) {
      a.lists.s[at + e] = top[j].sims[e];
      a.lists.r[at + e] = top[j].rows[e];
    }
  }
}

// A first pass of tensor_scan_topk_kernel over a sample of the model (its first rows) leaves
// each query's best K keys of the sample in its slices; their K-th, lowered by twice the error
// bound, is a lower bound on the K-th best key of the whole model as the main pass computes it
// (a row's key in either pass is within `error_bound` of its fp32 similarity, whatever the order
// of the tensor cores' additions). Written as the query's shared threshold, it lets the main
// pass drop from the first tile every row that cannot make the best K, where each block's own
// K-th rises only over its first tiles (docs/batch.md). One block a query; no seed (0) where the
// sample holds fewer than K real rows.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    seed_thresholds_kernel(SliceLists sample, float margin, unsigned* thresholds) {
  __shared__ float best_s[WarpTopk::kMaxK];
  __shared__ int best_r[WarpTopk::kMaxK];
  const int q = blockIdx.x;
  const long long first = static_cast<long long>(q) * sample.slices * sample.K;
  select_from_lists_block<kThreads, BoundBy::kHeadRanks>(sample.s + first, sample.r + first, sample.slices, sample.K,
                                                         best_s, best_r);
  __syncthreads();
  if (threadIdx.x == 0) {
    const float kth = best_s[sample.K - 1];
    const bool real = best_r[sample.K - 1] != kSentinelRow;
    // kth - margin rounded down (an infinite K-th: as many rows rank +inf in the whole model).
    const float seed = nextafterf(kth - margin, -__builtin_huge_valf());
    thresholds[q] = real && seed == seed ? tensor_scan::ordered_key(seed) : 0u;  // never a NaN seed
  }
}

}  // namespace distancies
