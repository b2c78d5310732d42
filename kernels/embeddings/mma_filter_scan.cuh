// Batched search that reads each model row once and keeps no lists while scanning. Every warp
// streams 16-row groups of the fp16 copy from global memory straight into mma.sync fragments
// (16-byte loads, no shared-memory staging, no block barriers), multiplies them by the batch's
// queries (their fragments kept in shared memory) on the tensor cores, and compares each score
// with its query's threshold in registers: the few at or above it are appended to the query's
// candidate buffer. The thresholds come from a first pass of the same kernel over an even sample
// of the model that writes every sampled key; a select per query then leaves the best K
// candidates as the one slice list batch_rerank certifies. docs/batch.md gives the argument.
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
  const __half* model;     // rows x ldg, the fp16 copy (ldg a multiple of 8: 16-byte rows)
  int ldg;
  int rows;
  const float* inv_norms;  // 1 / |x| per row
  const __half* queries;   // nq x ldg, normalised (batch_prepare)
  int nq;
  int chunks;              // 32-column chunks of a row: ceil(ldg / 32)
  int qgroups;             // query groups of a launch; block b serves group b % qgroups
  long long groups;        // 16-row groups scanned: group g starts at row 16 g stride
  long long stride;
  const unsigned* thresholds;  // nq ordered keys (the filter pass; unused by the sample pass)
  unsigned long long* cand;    // nq x capacity candidate keys (candidate_key)
  long long capacity;
  unsigned* counts;            // nq appended entries (may exceed capacity: overflow)
};

namespace filter_scan {

constexpr int kWarps = 8;

// A candidate as one sortable word: the score's order, then the row (lower rows first).
__device__ __forceinline__ unsigned long long candidate_key(unsigned key, int row) {
  return static_cast<unsigned long long>(key) << 32 | static_cast<unsigned>(~row);
}
__device__ __forceinline__ int candidate_row(unsigned long long c) { return static_cast<int>(~static_cast<unsigned>(c)); }
__device__ __forceinline__ float candidate_sim(unsigned long long c) {
  return from_ordered_bits(static_cast<unsigned>(c >> 32));
}
// A score's key; -0 counts as +0, so that the key order is the float order.
__device__ __forceinline__ unsigned score_key(float dot, float inv) {
  const unsigned k = ordered_bits(approx_rank_key(dot * inv));
  return k == 0x7fffffffu ? 0x80000000u : k;
}

// 16 bytes that L2 fetches as part of its 256-byte block (the neighbouring rows of a group).
// Volatile: the compiler must not speculate a load past the rows or the row (if-conversion).
__device__ __forceinline__ uint4 ld_row_chunk(const __half* p) {
  uint4 v;
  asm volatile("ld.global.nc.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

}  // namespace filter_scan

// kTiles x 8 queries a block, kGroups 16-row groups a warp at a time. The columns of each
// 32-column chunk are permuted the same way for rows and queries so that every fragment is one
// 16-byte load (mma_fragments.hpp: which lane loads what, and which scores it gets back).
// kSample: the pass over the sample, which writes every key at its position (no threshold, no
// atomics). mma.sync m16n8k16 needs sm_80: older targets get a body that traps (the searcher
// refuses those devices first).
template <int kTiles, int kGroups, bool kSample>
__global__ void __launch_bounds__(filter_scan::kWarps * 32) mma_filter_scan_kernel(FilterScanArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();
#else
  using namespace filter_scan;
  extern __shared__ uint4 qfrag[];  // [kTiles][chunks][32]: each lane's B fragments of a chunk
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4;
  const int qgroup = static_cast<int>(blockIdx.x) % a.qgroups;
  const long long part = blockIdx.x / a.qgroups, parts = gridDim.x / a.qgroups;
  const int q0 = qgroup * 8 * kTiles;
  for (int i = threadIdx.x; i < kTiles * a.chunks * 32; i += kWarps * 32) {
    const int l = i % 32, c = i / 32 % a.chunks, tile = i / 32 / a.chunks;
    const int q = q0 + tile * 8 + l / 4, col = c * 32 + mma_fragments::lane_column(l);
    uint4 v = make_uint4(0, 0, 0, 0);  // queries past the batch and columns past the row: zero
    if (q < a.nq && col < a.ldg) v = *reinterpret_cast<const uint4*>(a.queries + static_cast<long long>(q) * a.ldg + col);
    qfrag[i] = v;
  }
  unsigned floor_key[kTiles][2];  // no query past the batch passes (no key reaches ~0u)
#pragma unroll
  for (int tile = 0; tile < kTiles; ++tile)
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int q = q0 + tile * 8 + mma_fragments::c_query(lane, j);
      floor_key[tile][j] = q >= a.nq ? ~0u : kSample ? 0u : a.thresholds[q];
    }
  __syncthreads();

  const long long step = parts * kWarps * kGroups;
  for (long long first = (part * kWarps + warp) * kGroups; first < a.groups; first += step) {
    int row_lo[kGroups];  // rows g and g + 8 of each group (row_lo + 8); -1: past the scan
    float inv_lo[kGroups], inv_hi[kGroups];
    const __half* p_lo[kGroups];
#pragma unroll
    for (int r = 0; r < kGroups; ++r) {
      const long long grp = first + r;
      const long long row = grp * a.stride * 16 + g;
      row_lo[r] = grp < a.groups && row < a.rows ? static_cast<int>(row) : -1;
      const bool hi_in = row_lo[r] >= 0 && row + 8 < a.rows;
      inv_lo[r] = row_lo[r] >= 0 ? __ldg(a.inv_norms + row) : 0.0f;
      inv_hi[r] = hi_in ? __ldg(a.inv_norms + row + 8) : 0.0f;
      p_lo[r] = a.model + (row_lo[r] >= 0 ? row : 0) * a.ldg + mma_fragments::lane_column(lane);
      if (!hi_in) row_lo[r] = row_lo[r] >= 0 ? -2 - row_lo[r] : -1;  // -2 - row: row g in, g + 8 out
    }
    float acc[kGroups][kTiles][4];
#pragma unroll
    for (int r = 0; r < kGroups; ++r)
#pragma unroll
      for (int tile = 0; tile < kTiles; ++tile)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[r][tile][e] = 0.0f;
    // Chunk c + 1's loads are issued before chunk c's MMAs (registers double-buffered), so a
    // warp always has its next 16 rows' bytes in flight while it multiplies.
    uint4 lo[kGroups], hi[kGroups];
    auto load_chunk = [&](int c) {
      const bool col_in = c < a.chunks && c * 32 + mma_fragments::lane_column(lane) < a.ldg;
#pragma unroll
      for (int r = 0; r < kGroups; ++r) {
        const int code = row_lo[r];
        lo[r] = col_in && code != -1 ? ld_row_chunk(p_lo[r] + c * 32) : make_uint4(0, 0, 0, 0);
        hi[r] = col_in && code >= 0 ? ld_row_chunk(p_lo[r] + 8 * a.ldg + c * 32) : make_uint4(0, 0, 0, 0);
      }
    };
    load_chunk(0);
#pragma unroll 2
    for (int c = 0; c < a.chunks; ++c) {
      uint4 cur_lo[kGroups], cur_hi[kGroups];
#pragma unroll
      for (int r = 0; r < kGroups; ++r) cur_lo[r] = lo[r], cur_hi[r] = hi[r];
      load_chunk(c + 1);
#pragma unroll
      for (int tile = 0; tile < kTiles; ++tile) {
        const uint4 q = qfrag[(tile * a.chunks + c) * 32 + lane];
#pragma unroll
        for (int step = 0; step < 2; ++step) {
          unsigned b[2];
          mma_fragments::b_fragment(step, q, b);
#pragma unroll
          for (int r = 0; r < kGroups; ++r) {
            unsigned f[4];
            mma_fragments::a_fragment(step, cur_lo[r], cur_hi[r], f);
            ptx::mma_m16n8k16(acc[r][tile], f, b[0], b[1]);
          }
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kGroups; ++r) {
      const int code = row_lo[r];
      if (code == -1) continue;
      const int lo_row = code >= 0 ? code : -2 - code;
      const bool hi_in = code >= 0;
#pragma unroll
      for (int tile = 0; tile < kTiles; ++tile)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const bool upper = mma_fragments::c_row(lane, e) >= 8;
          if (upper && !hi_in) continue;
          const int row = lo_row + (upper ? 8 : 0);
          const unsigned key = score_key(acc[r][tile][e], upper ? inv_hi[r] : inv_lo[r]);
          const int q = q0 + tile * 8 + mma_fragments::c_query(lane, e);
          if (key < floor_key[tile][e & 1]) continue;
          unsigned long long* out = a.cand + static_cast<long long>(q) * a.capacity;
          if constexpr (kSample) {
            out[(first + r) * 16 + mma_fragments::c_row(lane, e)] = candidate_key(key, row);
          } else {
            const unsigned at = atomicAdd(a.counts + q, 1u);
            if (at < a.capacity) out[at] = candidate_key(key, row);
          }
        }
    }
  }
#endif
}

namespace filter_scan {

// The K-th largest of n >= K distinct keys, by eight passes over 8-bit digits (most significant
// first) counted in shared memory; warp 0 finds each pass's digit (warp_choose_digit).
// Every thread of the block calls it and gets the key.
template <int kThreads>
__device__ unsigned long long kth_largest(const unsigned long long* v, long long n, int K) {
  __shared__ unsigned hist[256];
  __shared__ unsigned long long chosen;
  __shared__ int still;
  unsigned long long prefix = 0, mask = 0;
  int left = K;  // how many keys at or above the answer remain to be passed over in this prefix
  for (int shift = 56; shift >= 0; shift -= 8) {
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

}  // namespace filter_scan

// One block a query: the K-th best key of its sample, lowered by `margin` (twice the error
// bound) and rounded down, becomes its threshold: a lower bound on the K-th best key of the
// whole model as the filter pass computes it (the sample's rows are rows of the model).
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    seed_from_sample_kernel(const unsigned long long* cand, long long capacity, long long n, int K, float margin,
                            unsigned* thresholds) {
  const unsigned long long kth = filter_scan::kth_largest<kThreads>(cand + blockIdx.x * capacity, n, K);
  if (threadIdx.x == 0) {
    const float seed = nextafterf(filter_scan::candidate_sim(kth) - margin, -__builtin_huge_valf());
    thresholds[blockIdx.x] = seed == seed ? ordered_bits(seed) : 0u;  // never a NaN seed
  }
}

// One block a query: the best K of its candidates, in rank order, as its one slice list
// (sentinels past the candidates). A buffer that overflowed lost candidates: status = 1 sends the
// query to the fallback (its list still holds real rows only).
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    select_candidates_kernel(const unsigned long long* cand, long long capacity, const unsigned* counts, int K,
                             SliceLists out, int* status) {
  __shared__ unsigned long long best[WarpTopk::kMaxK];
  __shared__ int taken;
  const unsigned long long* v = cand + blockIdx.x * capacity;
  const long long n = min(static_cast<long long>(counts[blockIdx.x]), capacity);
  if (threadIdx.x == 0) {
    taken = 0;
    if (counts[blockIdx.x] > capacity) status[blockIdx.x] = 1;
  }
  const unsigned long long kth = n > K ? filter_scan::kth_largest<kThreads>(v, n, K) : 0ull;
  __syncthreads();
  for (long long i = threadIdx.x; i < n; i += kThreads)
    if (v[i] >= kth) best[atomicAdd(&taken, 1)] = v[i];
  __syncthreads();
  const int m = taken;  // min(n, K): the keys are distinct
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
    r[rank] = filter_scan::candidate_row(best[e]);
  }
}

}  // namespace distancies
