// The int8 epilogue of the wgmma walk (wgmma_filter.cuh): the tiled int8 copy's rows
// (tiled_i8.cuh) against int8 queries, scores exact int32 dot products of the codes. A row's
// similarity to a query lies within E(q, tile) of s_q I / u_r, u_r = |x| / s_r being the same
// for every row of a 64-row tile to within [U_lo, U_hi] (the copy sorts the rows by it), so the
// test "upper bound >= the query's threshold" becomes one integer compare a score, I >= T(q, tile),
// with T worked out once a tile per query (docs/batch.md, "8-bit tiles"). The few that pass get
// their upper bound as the candidate key (the certificate then needs no bound of its own) and
// are appended under their sorted row to the block's segment of the query's buffer.
#pragma once
#include "kernels/embeddings/tiled_i8.cuh"
#include "kernels/embeddings/wgmma_filter.cuh"
#include "kernels/embeddings/wgmma_filter_f16.cuh"

namespace distancies {

namespace wgmma_filter {

struct I8Filter {
  using Element = int8_t;
  using Acc = int32_t;
  static constexpr int kKBlock = 128;  // a 128-byte box of int8
  static constexpr int kKStep = 32;
  static constexpr int kMaxKBlocks = 3;  // rows of at most 384 columns
  using Args = I8FilterArgs;

  template <int kQueries>
  struct Smem {
    unsigned theta_key[kQueries];  // theta_q's key: a lower bound on the k-th best fp32 similarity (~0u past the batch)
    unsigned count[kQueries];      // candidates this block appended for the query
    float4 query[kQueries];        // s_q, A_q, B_q
    float4 slope[kQueries];        // (theta - fp32_bound) / s_q rounded down, A_q / s_q and B_q / s_q rounded up
    int2 floor_pairs[consumers_for(kQueries)][2][kQueries / 2];  // [warpgroup][tile parity]: T(q, tile) by query pairs
    int2 stack[kStack][consumers_for(kQueries) * 128];           // [slot][consumer thread]: (score, accumulator index)
  };

  template <int kQueries>
  __device__ static void load(Smem<kQueries>& sm, const FilterScanArgs& a, const Args& x, int qgroup) {
    for (int i = threadIdx.x; i < kQueries; i += blockDim.x) {
      const int q = qgroup * kQueries + i;
      float theta = __builtin_huge_valf();
      if (q < a.nq) {
        // The fp16 passes' threshold t is their k-th key less twice the fp16 bound E (rounded
        // down: the fp16 filter compares keys with it), so at least k rows have fp16 keys >=
        // t + 2 E and fp32 similarities >= t + E: seed_bound (E) is added back, rounded down.
        // A NaN key lets everything through.
        theta = __fadd_rd(floor_float(a.thresholds[q]), x.seed_bound);
        if (theta != theta) theta = -__builtin_huge_valf();
        sm.query[i] = x.queries[q];
      } else {
        sm.query[i] = make_float4(1.0f, 0.0f, 0.0f, 0.0f);
      }
      sm.theta_key[i] = q < a.nq ? ordered_bits(theta) : ~0u;
      const float4 m = sm.query[i];
      sm.slope[i] =
          make_float4(__fdiv_rd(__fsub_rd(theta, x.fp32_bound), m.x), __fdiv_ru(m.y, m.x), __fdiv_ru(m.z, m.x), 0.0f);
      const long long part = blockIdx.x / a.qgroups;
      sm.count[i] = x.resume && q < a.nq ? x.seg_counts[static_cast<long long>(q) * tiled_i8::kMaxSegments + part] : 0;
    }
  }

  struct Tile {
    long long r0;  // this thread's (sorted) rows r0 and r0 + 8
    float4 u;      // the tile's U_lo, U_hi, nu_max, rho_max
    float r_lo;    // 1 / U_lo rounded up, 1 / U_hi rounded down (after_issue)
    float r_hi;
  };
  // Only the load: its first use is after the MMAs are issued (a use here held their issue for
  // the load's round trip, a visible share of the pass's stall samples: docs/batch.md).
  __device__ static Tile begin_tile(const FilterScanArgs&, const Args& x, long long tile) {
    const AccPlace p;
    return {tile * kRowTile + p.warp * 16 + p.g, __ldg(x.tiles + tile), 0.0f, 0.0f};
  }

  // E(q, tile), rounded up: the bound on |row's similarity - s_q I / u_r| for every row of the
  // tile (fp32 arithmetic rounded outward throughout, so the bound is the bound).
  __device__ static float bound(const float4& q, const float4& u, const Args& x) {
    return tiled_i8::score_bound(q, u, x.fp32_bound);
  }

  // T(q, tile) for the warpgroup's next tile, two queries a thread, into shared memory; then the
  // warpgroup's named barrier (1 + c), after which the filter reads them. Two buffers a
  // warpgroup: a thread writes the next tile's only after every thread has passed this tile's
  // barrier, so after it has read the previous one.
  template <int kQueries>
  __device__ static void after_issue(Smem<kQueries>& sm, const FilterScanArgs&, const Args& x, Tile& tile, int c,
                                     unsigned turn) {
    tile.r_lo = __frcp_ru(tile.u.x);
    tile.r_hi = __frcp_rd(tile.u.y);
    int* T = reinterpret_cast<int*>(sm.floor_pairs[c][turn & 1]);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int i = 2 * (threadIdx.x % 128) + h;
      if (i >= kQueries) break;
      // upper = s_q I / u + E >= theta  <=>  I >= (theta - fp32_bound - B_q rho - A_q nu) u / s_q,
      // u being U_lo or U_hi as the bracket is positive or not; rounded down throughout (the
      // query's part divided once, in load), an integer I passes its floor.
      const float4 k = sm.slope[i];
      const float d = __fmaf_rd(-k.y, tile.u.z, __fmaf_rd(-k.z, tile.u.w, k.x));
      const float t = __fmul_rd(d, d >= 0 ? tile.u.x : tile.u.y);
      T[i] = t != t ? -(1 << 30) : static_cast<int>(fminf(fmaxf(floorf(t) - 1.0f, -0x1p30f), 0x1p30f));
    }
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");
  }

  // The upper bound of a passing score as a key, rounded up (-0 as +0): s_q I / u is at most
  // s_q I / U_lo for I >= 0 and s_q I / U_hi below (|I| < 2^24: exact as a float).
  __device__ static unsigned upper_key(int I, const float4& q, const Tile& t, const Args& x) {
    return filter_scan::float_key(tiled_i8::upper_of(I, q.x, t.r_lo, t.r_hi, bound(q, t.u, x)));
  }

  // As the fp16 epilogue: one integer compare a score, a warp vote a 4, the few that pass through
  // the thread's stack to the exact key compare and the append (a shared-memory count a query and
  // block: no global atomic to wait for).
  template <int kQueries, class AccTensor>
  __device__ static void filter(AccTensor& acc, Smem<kQueries>& sm, const FilterScanArgs& a, const Args& x,
                                const Tile& tile, int qgroup, int c, unsigned turn) {
    const AccPlace p;
    const int t4 = p.t4, me = p.me;
    const long long r0 = tile.r0;
    const long long part = blockIdx.x / a.qgroups;
    unsigned long long* out = a.cand + static_cast<long long>(qgroup) * kQueries * a.capacity + part * x.seg;
    const int2* floors = sm.floor_pairs[c][turn & 1];
    unsigned done = 0, seen;
    constexpr int kChunks = ScoreChunks<kQueries>::kChunks, kGroup = ScoreChunks<kQueries>::kGroup;
    static_assert(kQueries % 16 == 0, "query chunks are voted on two at a time");
    do {
      seen = 0;
#pragma unroll
      for (int jg = 0; jg < kChunks / kGroup; ++jg) {
        int2 f[kGroup];
#pragma unroll
        for (int u = 0; u < kGroup; ++u) f[u] = floors[4 * (8 * jg + u) + t4];
          // One vote for 8 scores (two query pairs): half the votes and branches of the fp16
          // epilogue's 4, for a taken branch about twice as often (rare still).
#pragma unroll
        for (int u = 0; u < kGroup; u += 2) {
          const int i0 = 4 * (8 * jg + u);  // the 8 scores of query pairs 8 jg + u and + 1, rows r0 and r0 + 8
          bool any0 = false, any1 = false;
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            any0 |= acc(i0 + e) >= ((e & 1) ? f[u].y : f[u].x);
            any1 |= acc(i0 + 4 + e) >= ((e & 1) ? f[u + 1].y : f[u + 1].x);
          }
          if (__any_sync(~0u, any0 || any1)) {
#pragma unroll
            for (int e = 0; e < 8; ++e) {
              int v = acc(i0 + e);
              asm volatile("" : "+r"(v));
              const int2 fl = f[u + (e >> 2)];
              const bool pass = v >= ((e & 1) ? fl.y : fl.x);
              const unsigned slot = seen - done;
              if (pass && slot < kStack) sm.stack[slot][me] = make_int2(v, i0 + e);
              seen += pass;
            }
          }
        }
      }
      const unsigned n = seen > done ? min(seen - done, static_cast<unsigned>(kStack)) : 0u;
      for (unsigned e = 0; e < n; ++e) {
        const int2 v = sm.stack[e][me];
        const int i = v.y, h = (i >> 1) & 1, col = 8 * (i >> 2) + 2 * t4 + (i & 1);
        const long long row = r0 + 8 * h;
        if (row >= a.rows) continue;
        const unsigned k = upper_key(v.x, sm.query[col], tile, x);
        if (k < sm.theta_key[col]) continue;
        // The sorted row: the select maps its K best to the model's rows (no load here).
        const unsigned at = atomicAdd(&sm.count[col], 1u);
        if (at < x.seg) out[col * a.capacity + at] = filter_scan::candidate_key(k, static_cast<int>(row));
      }
      done += kStack;
    } while (__any_sync(~0u, seen > done));
  }

  // Every consumer thread past its last tile (named barrier 1 + the consumers, after each
  // warpgroup's own): the block's counts, one a query.
  template <int kQueries>
  __device__ static void finish(Smem<kQueries>& sm, const FilterScanArgs& a, const Args& x, int qgroup) {
    constexpr int kConsumerThreads = consumers_for(kQueries) * 128;
    asm volatile("bar.sync %0, %1;\n" ::"n"(1 + consumers_for(kQueries)), "n"(kConsumerThreads) : "memory");
    const long long part = blockIdx.x / a.qgroups;
    for (int i = threadIdx.x; i < kQueries; i += kConsumerThreads) {
      const int q = qgroup * kQueries + i;
      if (q < a.nq) x.seg_counts[static_cast<long long>(q) * tiled_i8::kMaxSegments + part] = sm.count[i];
    }
  }
};

}  // namespace wgmma_filter

}  // namespace distancies
