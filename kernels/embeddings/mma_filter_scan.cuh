// Batched search that reads each model row once and keeps no lists while scanning. Every warp
// streams 8-row groups of the fp16 copy through its own ring of shared-memory slots
// (cp.async, several chunks in flight, no block barriers) into mma.sync fragments, multiplies
// the batch's queries (their fragments kept in shared memory) by them on the tensor cores, and
// compares each score with its query's threshold in registers: the few at or above it are
// appended to the query's candidate buffer. The thresholds come from a first pass of the same
// kernel over an even sample of the model that writes every sampled key; a select per query then
// leaves the best K candidates as the one slice list batch_rerank certifies. docs/batch.md gives
// the argument.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/common/mma_sync_ptx.cuh"
#include "kernels/common/radix_digit.cuh"
#include "kernels/common/ranking.hpp"
#include "kernels/embeddings/batch_select.cuh"
#include "kernels/embeddings/mma_fragments.hpp"

namespace distancies {

struct FilterScanArgs {
  const __half* model;  // rows x ldg, the fp16 copy (ldg a multiple of 8: 16-byte rows)
  int ldg;
  int rows;
  const float* inv_norms;  // 1 / |x| per row
  const __half* queries;   // nq x ldg, normalised (batch_prepare)
  int nq;
  int chunks;        // 32-column chunks of a row: ceil(ldg / 32)
  int qgroups;       // query groups of a launch; block b serves group b % qgroups
  long long groups;  // 16-row groups scanned: group u starts at row 16 u stride
  long long stride;
  const unsigned* thresholds;  // nq ordered keys (the filter pass; unused by the sample pass)
  unsigned long long* cand;    // nq x capacity candidate keys (candidate_key)
  long long capacity;
  unsigned* counts;  // nq appended entries (may exceed capacity: overflow)
};

namespace filter_scan {

constexpr int kWarps = 8;
// Chunks a warp has in flight: its ring of shared-memory slots (one 512-byte slot per 8 rows).
constexpr int kStages = 4;

// Shared memory of a block: the queries' A fragments, then the warps' rings.
__host__ __device__ constexpr std::size_t query_smem(int mtiles, int chunks) {
  return static_cast<std::size_t>(mtiles) * chunks * 2 * 32 * 16;
}
__host__ __device__ constexpr std::size_t ring_smem(int units) {
  return static_cast<std::size_t>(kWarps) * kStages * 2 * units * 32 * 16;
}

// A candidate as one sortable word: the score's order, then the row (lower rows first).
__device__ __forceinline__ unsigned long long candidate_key(unsigned key, int row) {
  return static_cast<unsigned long long>(key) << 32 | static_cast<unsigned>(~row);
}
__device__ __forceinline__ int candidate_row(unsigned long long c) {
  return static_cast<int>(~static_cast<unsigned>(c));
}
__device__ __forceinline__ float candidate_sim(unsigned long long c) {
  return from_ordered_bits(static_cast<unsigned>(c >> 32));
}
// A float's key; -0 counts as +0, so that the key order is the float order.
__device__ __forceinline__ unsigned float_key(float f) {
  const unsigned k = ordered_bits(f);
  return k == 0x7fffffffu ? 0x80000000u : k;
}
// A score's key.
__device__ __forceinline__ unsigned score_key(float dot, float inv) { return float_key(approx_rank_key(dot * inv)); }

// A score offered to query q: its key against the query's floor; one that reaches it is written at
// `sample_at` (the sample pass, every key at its place) or appended to the query's buffer (one
// atomic; past the capacity only counted, which the select reports as overflow).
template <bool kSample>
__device__ __forceinline__ void offer(const FilterScanArgs& a, float dot, float inv, unsigned floor, int q, int row,
                                      long long sample_at) {
  const unsigned key = score_key(dot, inv);
  if (key < floor) return;
  unsigned long long* out = a.cand + static_cast<long long>(q) * a.capacity;
  if constexpr (kSample) {
    out[sample_at] = candidate_key(key, row);
  } else {
    const unsigned at = atomicAdd(a.counts + q, 1u);
    if (at < a.capacity) out[at] = candidate_key(key, row);
  }
}

// 16 bytes global -> shared that L2 fetches as part of its 256-byte block (the neighbouring rows
// of a group); in == false writes zeros (rows past the model, columns past the row).
__device__ __forceinline__ void cp_row_chunk(uint4* smem, const __half* gmem, bool in) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(in ? 16 : 0));
}

// The block's kMTiles query tiles' A fragments (mma_fragments.hpp) into shared memory,
// [kMTiles][chunks][step][32]: one 16-byte load a lane and k-step. Queries past the batch and
// columns past the row are zero. The caller synchronises the block.
template <int kMTiles>
__device__ void stage_query_fragments(const FilterScanArgs& a, int q0, uint4* qfrag) {
  for (int i = threadIdx.x; i < kMTiles * a.chunks * 2 * 32; i += kWarps * 32) {
    const int l = i % 32, step = i / 32 % 2, c = i / 64 % a.chunks, m = i / 64 / a.chunks;
    const int q = q0 + m * 16 + l / 4, col = c * 32 + mma_fragments::lane_column(l);
    uint4 lo = make_uint4(0, 0, 0, 0), hi = lo;
    if (col < a.ldg) {
      if (q < a.nq) lo = *reinterpret_cast<const uint4*>(a.queries + static_cast<long long>(q) * a.ldg + col);
      if (q + 8 < a.nq) hi = *reinterpret_cast<const uint4*>(a.queries + static_cast<long long>(q + 8) * a.ldg + col);
    }
    unsigned f[4];
    mma_fragments::a_fragment(step, lo, hi, f);
    qfrag[i] = make_uint4(f[0], f[1], f[2], f[3]);
  }
}

// The thresholds of a lane's queries g and g + 8 of each tile: 0 for the sample pass (every key
// written); no query past the batch passes (no key reaches ~0u).
template <int kMTiles, bool kSample>
__device__ void query_floors(const FilterScanArgs& a, int q0, int g, unsigned (&floor_key)[kMTiles][2]) {
#pragma unroll
  for (int m = 0; m < kMTiles; ++m)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int q = q0 + m * 16 + g + 8 * h;
      floor_key[m][h] = q >= a.nq ? ~0u : kSample ? 0u : a.thresholds[q];
    }
}

}  // namespace filter_scan

// kMTiles x 16 queries a block; a warp takes kUnits 16-row units (2 kUnits MMA row tiles of 8)
// at a time and walks their chunks through its ring, loads issued kStages - 1 chunks ahead and
// across units, so that the memory pipe never waits for the tensor cores. Each lane copies and
// reads back only its own 16 bytes of a slot, so cp.async.wait_group alone orders them (no warp
// or block barrier in the loop). kSample: the pass over the sample, which writes every key at its
// position (no threshold, no atomics). mma.sync m16n8k16 needs sm_80: older targets get a body
// that traps (the searcher refuses those devices first).
// Two blocks an SM (at most 128 registers) but for the largest shape, whose 128 accumulators
// take one block.
template <int kMTiles, int kUnits, bool kSample>
__global__ void __launch_bounds__(filter_scan::kWarps * 32, kMTiles* kUnits >= 16 ? 1 : 2)
    mma_filter_scan_kernel(FilterScanArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();
#else
  using namespace filter_scan;
  constexpr int kN = 2 * kUnits;  // 8-row MMA tiles a warp multiplies at a time
  extern __shared__ uint4 filter_smem[];
  uint4* qfrag = filter_smem;  // [kMTiles][chunks][step][32]: each lane's A fragment of a k-step
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  uint4* ring = filter_smem + kMTiles * a.chunks * 2 * 32 + warp * kStages * kN * 32 + lane;  // [stage][n][32]
  const int g = lane / 4;
  const int qgroup = static_cast<int>(blockIdx.x) % a.qgroups;
  const long long part = blockIdx.x / a.qgroups, parts = gridDim.x / a.qgroups;
  const int q0 = qgroup * 16 * kMTiles;
  stage_query_fragments<kMTiles>(a, q0, qfrag);
  unsigned floor_key[kMTiles][2];
  query_floors<kMTiles, kSample>(a, q0, g, floor_key);
  __syncthreads();

  // A warp's work: blocks of kUnits units, every `bstep`-th from its own; its loads run through
  // them as one sequence of (block, chunk) items, the ring's slot of item L being L mod kStages.
  const long long blocks = (a.groups + kUnits - 1) / kUnits;
  const long long first = part * kWarps + warp, bstep = parts * kWarps;
  long long load_block = first;
  int load_chunk = 0, load_slot = 0;
  auto issue = [&]() {  // the next item's copies, one commit group (empty past the work)
    if (load_block < blocks) {
      const int col = load_chunk * 32 + mma_fragments::lane_column(lane);
#pragma unroll
      for (int n = 0; n < kN; ++n) {
        const long long unit = load_block * kUnits + n / 2;
        const long long row = unit * a.stride * 16 + (n % 2) * 8 + g;
        const bool in = unit < a.groups && row < a.rows && col < a.ldg;
        cp_row_chunk(ring + (load_slot * kN + n) * 32, in ? a.model + row * a.ldg + col : a.model, in);
      }
      if (++load_chunk == a.chunks) load_chunk = 0, load_block += bstep;
      load_slot = load_slot + 1 == kStages ? 0 : load_slot + 1;
    }
    ptx::cp_async_commit();
  };
#pragma unroll
  for (int i = 0; i < kStages - 1; ++i) issue();
  int slot = 0;
  for (long long b = first; b < blocks; b += bstep) {
    int row0[kN];  // first row of each 8-row tile; rows past the model or the sample: -1
    float2 inv[kN];
#pragma unroll
    for (int n = 0; n < kN; ++n) {
      const long long unit = b * kUnits + n / 2;
      const long long row = unit * a.stride * 16 + (n % 2) * 8;
      row0[n] = unit < a.groups && row < a.rows ? static_cast<int>(row) : -1;
      const long long r = row + mma_fragments::c_row(lane, 0);  // rows r and r + 1 of this lane
      inv[n].x = row0[n] >= 0 && r < a.rows ? __ldg(a.inv_norms + r) : 0.0f;
      inv[n].y = row0[n] >= 0 && r + 1 < a.rows ? __ldg(a.inv_norms + r + 1) : 0.0f;
    }
    float acc[kN][kMTiles][4];
#pragma unroll
    for (int n = 0; n < kN; ++n)
#pragma unroll
      for (int m = 0; m < kMTiles; ++m)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[n][m][e] = 0.0f;
#pragma unroll 2
    for (int c = 0; c < a.chunks; ++c) {
      ptx::cp_async_wait<kStages - 2>();  // this item's copies (this lane's own) have landed
      uint4 rw[kN];
#pragma unroll
      for (int n = 0; n < kN; ++n) rw[n] = ring[(slot * kN + n) * 32];
      slot = slot + 1 == kStages ? 0 : slot + 1;
      issue();  // into the slot read one item ago (its values are in registers, used by its MMAs)
#pragma unroll
      for (int step = 0; step < 2; ++step)
#pragma unroll
        for (int m = 0; m < kMTiles; ++m) {
          const uint4 q = qfrag[((m * a.chunks + c) * 2 + step) * 32 + lane];
          const unsigned f[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
          for (int n = 0; n < kN; ++n) {
            unsigned bf[2];
            mma_fragments::b_fragment(step, rw[n], bf);
            ptx::mma_m16n8k16(acc[n][m], f, bf[0], bf[1]);
          }
        }
    }
#pragma unroll
    for (int n = 0; n < kN; ++n) {
      if (row0[n] < 0) continue;
#pragma unroll
      for (int m = 0; m < kMTiles; ++m)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = row0[n] + mma_fragments::c_row(lane, e);
          if (row >= a.rows) continue;
          offer<kSample>(a, acc[n][m][e], (e & 1) ? inv[n].y : inv[n].x, floor_key[m][e >> 1],
                         q0 + m * 16 + mma_fragments::c_query(lane, e), row,
                         (b * kUnits + n / 2) * 16 + (n % 2) * 8 + mma_fragments::c_row(lane, e));
        }
    }
  }
  ptx::cp_async_wait<0>();  // no copy outlives the block
#endif
}

namespace filter_scan {

// Keys a select block copies into shared memory before its passes (160 KB); a query with more
// candidates is selected from global memory (same passes, slower).
constexpr long long kSmemKeys = 20480;
__host__ __device__ constexpr std::size_t select_smem(long long n) {
  return static_cast<std::size_t>(n < kSmemKeys ? n : kSmemKeys) * sizeof(unsigned long long);
}

// The K-th largest of n >= K keys, by passes over 8-bit digits (most significant first, down to
// the digit at `last_shift`: 0 for the whole word, 32 for its high half alone) counted in shared
// memory; warp 0 finds each pass's digit (warp_choose_digit). (Adding a warp's equal digits once,
// through match_any, made the passes twice as slow on the H100.) Every thread of the block calls
// it and gets the key (its digits below last_shift zero).
template <int kThreads>
__device__ unsigned long long kth_largest(const unsigned long long* v, long long n, int K, int last_shift) {
  __shared__ unsigned hist[256];
  __shared__ unsigned long long chosen;
  __shared__ int still;
  unsigned long long prefix = 0, mask = 0;
  int left = K;  // how many keys at or above the answer remain to be passed over in this prefix
  for (int shift = 56; shift >= last_shift; shift -= 8) {
    for (int i = threadIdx.x; i < 256; i += kThreads) hist[i] = 0;
    __syncthreads();
    for (long long i = threadIdx.x; i < n; i += kThreads) {
      const unsigned long long x = v[i];
      if ((x & mask) == prefix) atomicAdd(&hist[(x >> shift) & 255], 1u);
    }
    __syncthreads();
    if (threadIdx.x < 32) {  // n >= K: the digit is always found
      const DigitChoice c = warp_choose_digit(hist, left, threadIdx.x);
      if (c.digit >= 0) {
        chosen = prefix | static_cast<unsigned long long>(c.digit) << shift;
        still = c.still;
      }
    }
    __syncthreads();
    prefix = chosen;
    left = still;
    mask |= 0xffull << shift;
  }
  return prefix;
}

// The first min(n, kSmemKeys) keys copied to dynamic shared memory: where the passes read them
// (all of them in shared memory when they fit, else from global memory).
template <int kThreads>
__device__ const unsigned long long* stage_keys(const unsigned long long* v, long long n) {
  extern __shared__ unsigned long long staged_keys[];
  if (n > kSmemKeys) return v;
  for (long long i = threadIdx.x; i < n; i += kThreads) staged_keys[i] = v[i];
  __syncthreads();
  return staged_keys;
}

// The K-th best of n >= K keys by their high halves (the score), less `margin`, rounded down
// (NaN where the key's score is): every thread of the block gets it.
template <int kThreads>
__device__ float kth_score_less(const unsigned long long* keys, long long n, int K, float margin) {
  const unsigned long long kth = kth_largest<kThreads>(stage_keys<kThreads>(keys, n), n, K, 32);
  return nextafterf(candidate_sim(kth) - margin, -__builtin_huge_valf());
}

// What a seed kernel needs to recompute a few candidates exactly (exact_kth_key).
struct ExactSeed {
  DotArgs exact;             // the model's fp32 rows as the re-rank reads them (query fields unused)
  const float* queries;      // the launch's queries, nq x exact.dim as uploaded
  const float* query_norms;  // nq
  const float* shifts;       // null: keys are similarities; else keys are similarity - shifts[q]
  const int* order;          // null: the candidates' rows are the model's; else order[row] is
};

// Candidates a seed recomputes exactly: one a warp of a 1,024-thread select block.
constexpr int kExactSeedRows = 32;

// Where a seed kernel stages its query in dynamic shared memory: past the keys (select_smem).
__host__ __device__ constexpr std::size_t exact_seed_query_offset(long long capacity) {
  return (select_smem(capacity) + 15) / 16 * 16;
}
__host__ __device__ constexpr std::size_t exact_seed_smem(long long capacity, int ld) {
  return exact_seed_query_offset(capacity) + static_cast<std::size_t>(ld) * sizeof(float);
}

// Every thread of the block (query blockIdx.x): the rows of the n keys whose score key is at
// least `at` (the first kExactSeedRows found), their fp32 similarities computed as the re-rank
// computes them, and the k-th largest of those in the keys' scale (less the query's shift, rounded
// down) less 2^-20, rounded down: k distinct rows of the model score at least that plus 2^-20, so
// it bounds the k-th best key from below by more than a few roundings of the keys' own
// arithmetic, with no key error in it. -inf where fewer than k rows were found or one scores
// NaN. `qf`: exact.ld floats of shared memory. Every thread must call it once a block.
template <int kThreads>
__device__ float exact_kth_key(const unsigned long long* keys, long long n, unsigned at, int k, const ExactSeed& e,
                               float* qf) {
  static_assert(kThreads / 32 >= kExactSeedRows, "a warp a recomputed row");
  __shared__ int rows[kExactSeedRows];
  __shared__ float sims[kExactSeedRows];
  __shared__ int taken;
  __shared__ float result;
  DotArgs a = e.exact;
  a.query = e.queries + static_cast<long long>(blockIdx.x) * a.dim;
  a.query_norm = e.query_norms[blockIdx.x];
  stage_query(a, qf);
  if (threadIdx.x == 0) taken = 0, result = -__builtin_huge_valf();
  __syncthreads();
  for (long long i = threadIdx.x; i < n; i += kThreads) {
    const unsigned long long v = keys[i];
    if (static_cast<unsigned>(v >> 32) < at) continue;
    const int slot = atomicAdd(&taken, 1);
    if (slot < kExactSeedRows) rows[slot] = e.order ? e.order[candidate_row(v)] : candidate_row(v);
  }
  __syncthreads();
  const int m = min(taken, kExactSeedRows);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (m >= k && warp < m) {
    const float s = row_similarity(a, reinterpret_cast<const float4*>(qf), rows[warp], lane);
    if (lane == 0) sims[warp] = s;
  }
  __syncthreads();
  if (m >= k && warp == 0) {
    // Each similarity's place among the m (ties by slot); the one at place k - 1 is the k-th.
    const float mine = lane < m ? sims[lane] : 0.0f;
    int before = 0;
    bool nan = false;
    for (int j = 0; j < m; ++j) {
      const float other = sims[j];
      nan |= other != other;
      before += other > mine || (other == mine && j < lane);
    }
    if (!nan && lane < m && before == k - 1) {
      const float key = e.shifts ? __fsub_rd(mine, e.shifts[blockIdx.x]) : mine;
      result = __fsub_rd(key, 0x1p-20f);
    }
  }
  __syncthreads();
  return result;
}

// A seed's k-th best of n >= k keys (every thread of the block): where `e` has the model's rows,
// exact_kth_key over the rows of the best kExactSeedRows keys; else the k-th key's score.
// `smem`: the block's dynamic shared memory, exact_seed_smem(capacity, e.exact.ld), the keys
// (if staged) first.
template <int kThreads>
__device__ float seed_kth(const unsigned long long* keys, long long n, int k, const ExactSeed& e, unsigned char* smem,
                          long long capacity) {
  const bool exact = e.exact.vectors != nullptr;
  const int m = exact ? static_cast<int>(min(n, static_cast<long long>(kExactSeedRows))) : k;
  const unsigned long long at = kth_largest<kThreads>(keys, n, m, 32);
  if (!exact) return candidate_sim(at);
  float* qf = reinterpret_cast<float*>(smem + exact_seed_query_offset(capacity));
  return exact_kth_key<kThreads>(keys, n, static_cast<unsigned>(at >> 32), k, e, qf);
}

}  // namespace filter_scan

// One block a query: the K-th best key of its sample, lowered by `margin` (twice the error
// bound) and rounded down, becomes its threshold: a lower bound on the K-th best key of the
// whole model as the filter pass computes it (the sample's rows are rows of the model). Only the
// key's high half (the score) matters here: four passes. Dynamic shared memory: select_smem(n).
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    seed_from_sample_kernel(const unsigned long long* cand, long long capacity, long long n, int K, float margin,
                            unsigned* thresholds) {
  const float seed = filter_scan::kth_score_less<kThreads>(cand + blockIdx.x * capacity, n, K, margin);
  if (threadIdx.x == 0) thresholds[blockIdx.x] = seed == seed ? ordered_bits(seed) : 0u;  // never a NaN seed
}

// One block a query: the k-th best key that a filter pass over a sample of the model's rows
// appended (keys at or above the query's threshold) raises the threshold where it is higher: any
// k rows of the model bound its k-th best from below, as in seed_from_sample_kernel (an
// overflowed buffer holds k rows all the same). Where `e` has the model's rows, the rows of the
// best kExactSeedRows keys are recomputed in fp32 (exact_kth_key) and their k-th exact similarity,
// less `margin` / 2 (the keys' error bound: the filter's keys are within it of the similarity),
// is the threshold: at least the k-th key less `margin`, without the keys' error below the k-th.
// Else the k-th key less `margin`. Fewer than k candidates leave it as it was. Dynamic shared
// memory: exact_seed_smem(capacity, e.exact.ld).
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    refine_seed_kernel(const unsigned long long* cand, long long capacity, const unsigned* counts, int k, float margin,
                       filter_scan::ExactSeed e, unsigned* thresholds) {
  const long long n = min(static_cast<long long>(counts[blockIdx.x]), capacity);
  if (n < k) return;  // the whole block
  extern __shared__ __align__(16) unsigned char seed_smem[];
  const unsigned long long* keys = filter_scan::stage_keys<kThreads>(cand + blockIdx.x * capacity, n);
  const float kth = filter_scan::seed_kth<kThreads>(keys, n, k, e, seed_smem, capacity);
  const float seed = e.exact.vectors ? __fsub_rd(kth, margin / 2) : nextafterf(kth - margin, -__builtin_huge_valf());
  if (threadIdx.x == 0 && seed > -__builtin_huge_valf())
    thresholds[blockIdx.x] = max(thresholds[blockIdx.x], ordered_bits(seed));
}

// The best K of a query's n candidates v (every thread of its block), in rank order, as its one
// slice list (sentinels past the candidates).
// `order` (not null): the candidates' rows are sorted rows of the tiled int8 copy, order[] their
// places in the model.
template <int kThreads>
__device__ void select_staged(const unsigned long long* v, long long n, int K, SliceLists out, int* status,
                              const int* order = nullptr) {
  __shared__ unsigned long long best[WarpTopk::kMaxK];
  __shared__ int taken;
  if (threadIdx.x == 0) taken = 0;
  const unsigned long long kth = n > K ? filter_scan::kth_largest<kThreads>(v, n, K, 0) : 0ull;
  __syncthreads();
  for (long long i = threadIdx.x; i < n; i += kThreads)
    if (v[i] >= kth) {
      const int at = atomicAdd(&taken, 1);
      if (at < K) best[at] = v[i];
    }
  __syncthreads();
  // min(n, K): the keys are distinct. Were they not (a row appended twice), more than K would
  // reach the K-th: the list keeps K of them and the query goes to the exact fallback, rather than
  // writing past best[].
  const int m = min(taken, K);
  if (threadIdx.x == 0 && taken > K) *status = 1;
  float* s = out.s + static_cast<long long>(blockIdx.x) * K;
  int* r = out.r + static_cast<long long>(blockIdx.x) * K;
  for (int e = threadIdx.x; e < K; e += kThreads) {
    if (e >= m) {
      s[e] = kSentinelSim;
      r[e] = kSentinelRow;
      continue;
    }
    int rank = 0;
    for (int j = 0; j < m; ++j) rank += best[j] > best[e];
    s[rank] = filter_scan::candidate_sim(best[e]);
    const int row = filter_scan::candidate_row(best[e]);
    r[rank] = order ? order[row] : row;
  }
}

// One block a query: the best K of its candidates (select_staged). A buffer that overflowed lost
// candidates: status = 1 sends the query to the fallback (its list still holds real rows only).
// Dynamic shared memory: select_smem(capacity).
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    select_candidates_kernel(const unsigned long long* cand, long long capacity, const unsigned* counts, int K,
                             SliceLists out, int* status) {
  const long long n = min(static_cast<long long>(counts[blockIdx.x]), capacity);
  if (threadIdx.x == 0 && counts[blockIdx.x] > capacity) status[blockIdx.x] = 1;
  select_staged<kThreads>(filter_scan::stage_keys<kThreads>(cand + blockIdx.x * capacity, n), n, K, out,
                          status + blockIdx.x);
}

}  // namespace distancies
