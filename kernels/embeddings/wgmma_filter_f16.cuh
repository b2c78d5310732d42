// The fp16 epilogue of the wgmma walk (wgmma_filter.cuh): fp16 rows and queries, fp32 scores.
// Each score is scaled by its row's 1 / |x| and compared with its query's threshold as a float;
// the few that pass go through a small per-thread stack in shared memory to the exact key compare
// and the append (filter_scan::offer's rule).
#pragma once
#include "kernels/embeddings/wgmma_filter.cuh"

namespace distancies {

namespace wgmma_filter {

// A threshold key as the float no score below which can reach it (score_key's order is the
// float order): keys of negative NaNs let everything through, ~0u (no query) nothing.
__device__ __forceinline__ float floor_float(unsigned key) {
  return key == ~0u ? __builtin_huge_valf() : key < 0x00800000u ? -__builtin_huge_valf() : from_ordered_bits(key);
}

// The accumulators' places (the PTX ISA's wgmma D layout, as CuTe's CLayout_64xN): value i of a
// consumer thread is row 16 warp + g + 8 ((i >> 1) & 1), query 8 (i >> 2) + 2 t4 + (i & 1).
struct AccPlace {
  int lane, warp, g, t4, me;
  __device__ AccPlace()
      : lane(threadIdx.x % 32), warp(threadIdx.x % 128 / 32), g(lane / 4), t4(lane % 4), me(threadIdx.x) {}
};

struct F16Filter {
  using Element = cute::half_t;
  using Acc = float;
  static constexpr int kKBlock = 64;  // a 128-byte box of fp16
  static constexpr int kKStep = 16;
  static constexpr int kMaxKBlocks = 5;  // the queries' resident columns: rows of at most 320 (D <= 320)
  struct Args {};

  template <int kQueries>
  struct Smem {
    unsigned floors[kQueries];                            // the block's queries' thresholds (~0u past the batch)
    float2 floor_pairs[kQueries / 2];                     // as floats: a score below its query's never reaches it
    float2 stack[kStack][consumers_for(kQueries) * 128];  // [slot][consumer thread]: (score, accumulator index)
  };

  template <int kQueries>
  __device__ static void load(Smem<kQueries>& sm, const FilterScanArgs& a, const Args&, int qgroup) {
    for (int i = threadIdx.x; i < kQueries; i += blockDim.x) {
      const int q = qgroup * kQueries + i;
      sm.floors[i] = q < a.nq ? a.thresholds[q] : ~0u;
      reinterpret_cast<float*>(sm.floor_pairs)[i] = floor_float(sm.floors[i]);
    }
  }

  struct Tile {
    long long r0;  // this thread's rows r0 and r0 + 8
    float inv0, inv1;
  };
  __device__ static Tile begin_tile(const FilterScanArgs& a, const Args&, long long tile) {
    const AccPlace p;
    const long long r0 = tile * kRowTile + p.warp * 16 + p.g;
    return {r0, r0 < a.rows ? __ldg(a.inv_norms + r0) : 0.0f, r0 + 8 < a.rows ? __ldg(a.inv_norms + r0 + 8) : 0.0f};
  }
  template <int kQueries>
  __device__ static void after_issue(Smem<kQueries>&, const FilterScanArgs&, const Args&, Tile&, int, unsigned) {}
  template <int kQueries>
  __device__ static void finish(Smem<kQueries>&, const FilterScanArgs&, const Args&, int) {}

  // Each score against its query's float floor (one multiply and one compare, the code kept
  // short: a fully unrolled offer() a score made the kernel's code outgrow the instruction
  // cache). Those that pass go to the thread's stack, kStack a round, and are offered from
  // there (the exact key compare, the append); more than kStack: another round, for the next.
  template <int kQueries, class AccTensor>
  __device__ static void filter(AccTensor& acc, Smem<kQueries>& sm, const FilterScanArgs& a, const Args&,
                                const Tile& tile, int qgroup, int, unsigned) {
    const AccPlace p;
    const int t4 = p.t4, me = p.me;
    const long long r0 = tile.r0;
    const int q0 = qgroup * kQueries;
    constexpr int kChunks = ScoreChunks<kQueries>::kChunks, kGroup = ScoreChunks<kQueries>::kGroup;
    unsigned done = 0, seen;
    do {
      seen = 0;
      // Opaque to the compiler each round, so that it does not keep all the products live
      // across rounds (that spilled).
      float inv[2] = {tile.inv0, tile.inv1};
      asm volatile("" : "+f"(inv[0]), "+f"(inv[1]));
      // The floors loaded 8 pairs at a time, ahead of the stack's stores (which the compiler
      // cannot tell apart from them: loaded one pair before each branch, every branch waited on
      // its load); one branch for 4 scores (predicated pushes without it, or a branch for 8,
      // measured slower).
#pragma unroll
      for (int jg = 0; jg < kChunks / kGroup; ++jg) {
        float2 f[kGroup];
#pragma unroll
        for (int u = 0; u < kGroup; ++u) f[u] = sm.floor_pairs[4 * (8 * jg + u) + t4];
#pragma unroll
        for (int u = 0; u < kGroup; ++u) {
          const int i0 = 4 * (8 * jg + u);  // the 4 scores of query pair 8 jg + u, rows r0 and r0 + 8
          bool any = false;
#pragma unroll
          for (int e = 0; e < 4; ++e) any |= !(acc(i0 + e) * inv[e >> 1] < ((e & 1) ? f[u].y : f[u].x));
          // One vote a warp: a uniform branch (no reconvergence to pay for), taken by a warp with
          // a passing score among its 128, where each compare is made again: opaque scores, so
          // that the compiler does not keep four more predicates from the compare above (that
          // doubled its compares).
          if (__any_sync(~0u, any)) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              float v = acc(i0 + e);
              asm volatile("" : "+f"(v));
              const bool pass = !(v * inv[e >> 1] < ((e & 1) ? f[u].y : f[u].x));
              const unsigned slot = seen - done;
              if (pass && slot < kStack) sm.stack[slot][me] = make_float2(v, __int_as_float(i0 + e));
              seen += pass;
            }
          }
        }
      }
      // The exact key compare, then every append's atomic at once and the stores after them:
      // a thread's candidates pay one atomic round trip, not one each.
      const unsigned n = seen > done ? min(seen - done, static_cast<unsigned>(kStack)) : 0u;
      unsigned long long key[kStack];
      unsigned at[kStack];
      int query[kStack];
#pragma unroll
      for (int e = 0; e < kStack; ++e) {
        at[e] = ~0u;
        if (e < n) {
          const float2 v = sm.stack[e][me];
          const int i = __float_as_int(v.y), h = (i >> 1) & 1, col = 8 * (i >> 2) + 2 * t4 + (i & 1);
          const long long row = r0 + 8 * h;
          const unsigned k = filter_scan::score_key(v.x, h ? tile.inv1 : tile.inv0);
          query[e] = q0 + col;
          key[e] = filter_scan::candidate_key(k, static_cast<int>(row));
          if (row < a.rows && k >= sm.floors[col]) at[e] = atomicAdd(a.counts + query[e], 1u);
        }
      }
#pragma unroll
      for (int e = 0; e < kStack; ++e)
        if (at[e] < a.capacity) a.cand[static_cast<long long>(query[e]) * a.capacity + at[e]] = key[e];
      done += kStack;
    } while (__any_sync(~0u, seen > done));  // the warp's rounds together (its votes need every lane)
  }
};

}  // namespace wgmma_filter

}  // namespace distancies
