// The filtered scan's many-query walk on Hopper's warpgroup MMA (sm_90a), built on CUTLASS's
// CuTe: the shape of a GEMM mainloop with the filter as its epilogue. A block keeps kQueries
// queries resident in shared memory for its whole life (their fp16 rows, loaded once by TMA) and
// streams 64-row tiles of the model through a ring of 64-column stages (one TMA box a stage).
// Warpgroups 0 and 1 take alternate row tiles, so that one filters its 64 x kQueries scores while
// the other multiplies; warpgroup 2 only issues the copies (one thread), its registers handed to
// the others (setmaxnreg: 232 a consumer thread, for 128 fp32 accumulators at kQueries = 256).
// The scores stay in registers and are never written to memory: each is scaled by its row's
// 1 / |x| and compared with its query's threshold as a float; the few that pass go through a
// small per-thread stack in shared memory to the exact key compare and the append (filter_scan::
// offer's rule). The tensor cores read both operands from shared memory (wgmma SS); the rows'
// 64-column boxes past the row's end are zero-filled by TMA, which pads D = 300 to 320 in shared
// memory only.
#pragma once
#include <cute/tensor.hpp>
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>

#include "kernels/embeddings/mma_filter_scan.cuh"
#include "kernels/embeddings/stage_ring.hpp"

namespace distancies {

namespace wgmma_filter {

constexpr int kRowTile = 64;    // rows a consumer warpgroup multiplies at a time (the wgmma's M)
constexpr int kKBlock = 64;     // columns of a stage: one 128-byte swizzle atom of fp16
constexpr int kMaxKBlocks = 5;  // the queries' resident columns: rows of at most 320 (D <= 320)
constexpr int kThreads = 384;   // two consumer warpgroups and a producer warpgroup
constexpr std::size_t kSmemLimit = 227 * 1024;
constexpr int kStack = 4;       // passing scores a consumer thread collects per round (shared memory)

// A threshold key as the float no score below which can reach it (score_key's order is the
// float order): keys of negative NaNs let everything through, ~0u (no query) nothing.
__device__ __forceinline__ float floor_float(unsigned key) {
  return key == ~0u ? __builtin_huge_valf() : key < 0x00800000u ? -__builtin_huge_valf() : from_ordered_bits(key);
}

// Everything that follows from kQueries: shared-memory layouts (CuTe's 128-byte swizzled K-major
// atoms, what wgmma and TMA both read), the MMA (64 x kQueries x 16, fp32 accumulators), the ring
// depth that fills the shared memory, and the shared storage.
template <int kQueries>
struct Config {
  static constexpr std::size_t kQueryBytes = std::size_t(kQueries) * kKBlock * kMaxKBlocks * 2;
  static constexpr std::size_t kStageBytes = std::size_t(kRowTile) * kKBlock * 2;
  // The epilogue's shared memory: the queries' keys and float floors, each consumer thread's
  // stack of kStack passing scores, the barriers (rounded up).
  static constexpr std::size_t kEpilogueBytes = std::size_t(kQueries) * 8 + kStack * 256 * 8 + 1024;
  static constexpr int kStages = static_cast<int>((kSmemLimit - kQueryBytes - kEpilogueBytes) / kStageBytes);
  static_assert(kStages >= 4, "the ring must hold more than a row tile's columns");
  using QueryLayout = decltype(cute::tile_to_shape(
      cute::GMMA::Layout_K_SW128_Atom<cute::half_t>{},
      cute::make_shape(cute::Int<kQueries>{}, cute::Int<kKBlock>{}, cute::Int<kMaxKBlocks>{})));
  using RowLayout = decltype(cute::tile_to_shape(
      cute::GMMA::Layout_K_SW128_Atom<cute::half_t>{},
      cute::make_shape(cute::Int<kRowTile>{}, cute::Int<kKBlock>{}, cute::Int<kStages>{})));
  using Mma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<cute::half_t, cute::half_t, float,
                                 cute::Shape<cute::Int<kRowTile>, cute::Int<kQueries>, cute::Int<kKBlock>>,
                                 cute::GMMA::Major::K, cute::GMMA::Major::K>()));
  struct Smem {
    alignas(1024) cute::ArrayEngine<cute::half_t, cute::cosize_v<QueryLayout>> queries;
    alignas(1024) cute::ArrayEngine<cute::half_t, cute::cosize_v<RowLayout>> rows;
    alignas(8) uint64_t full[kStages];  // a stage's box landed (TMA transaction bytes)
    uint64_t empty[kStages];            // its warpgroup's MMAs are done with it (128 arrivals)
    uint64_t queries_full;
    uint64_t mma_turn[2];               // warpgroup c may issue its tile's MMAs (the other's are issued)
    unsigned floors[kQueries];          // the block's queries' thresholds (~0u past the batch)
    float2 floor_pairs[kQueries / 2];   // as floats: a score below its query's never reaches it
    float2 stack[kStack][256];          // [slot][consumer thread]: (score, accumulator index)
  };
  static_assert(sizeof(Smem) <= kSmemLimit, "the block's shared memory");
};

}  // namespace wgmma_filter

// Block b serves query group b % qgroups (kQueries queries from qgroup * kQueries) and the row
// tiles part, part + parts, ... (part = b / qgroups) of the model's every tile_stride-th tile (1:
// all of them; more: the sample that refines the thresholds): the qgroups blocks of a part read
// the same tiles at about the same time, so each tile comes from DRAM once and from L2 for the
// others (L2 prefetches ahead of the loads measured no faster). kblocks: 64-column blocks of a
// row (ceil(ldg / 64) <= kMaxKBlocks); kLastSteps: the 16-column MMA steps taken in the last one
// (D = 300, ldg = 304: 3 of 4, a twentieth of the MMAs skipped; 4 covers any row, the columns
// past ldg being TMA's zeros). The filter and refine passes only (the sample pass writes every key
// at its position and runs on another walk).
template <int kQueries, int kLastSteps, class TmaRows, class TmaQueries>
__global__ void __launch_bounds__(wgmma_filter::kThreads, 1)
    wgmma_filter_kernel(FilterScanArgs a, int kblocks, int tile_stride, int ordered, CUTE_GRID_CONSTANT TmaRows const tma_rows,
                        CUTE_GRID_CONSTANT TmaQueries const tma_queries) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // wgmma and setmaxnreg are sm_90a's; the host runs this walk on 9.0 devices only
#elif defined(__CUDA_ARCH__)
  using namespace cute;
  using namespace wgmma_filter;
  using C = Config<kQueries>;
  using Full = cutlass::arch::ClusterTransactionBarrier;
  using Empty = cutlass::arch::ClusterBarrier;
  constexpr int S = C::kStages;
  extern __shared__ __align__(1024) unsigned char wgmma_filter_smem[];
  auto& sm = *reinterpret_cast<typename C::Smem*>(wgmma_filter_smem);
  Tensor sQ = make_tensor(make_smem_ptr(sm.queries.begin()), typename C::QueryLayout{});  // (queries, 64, kb)
  Tensor sR = make_tensor(make_smem_ptr(sm.rows.begin()), typename C::RowLayout{});       // (64 rows, 64, stage)

  const int wg = threadIdx.x / 128;
  const int qgroup = static_cast<int>(blockIdx.x) % a.qgroups;
  const long long part = blockIdx.x / a.qgroups, parts = gridDim.x / a.qgroups;
  const long long all_tiles = (static_cast<long long>(a.rows) + kRowTile - 1) / kRowTile;
  const long long tiles = (all_tiles + tile_stride - 1) / tile_stride;  // walked: tile v is v * tile_stride
  for (int i = threadIdx.x; i < kQueries; i += kThreads) {
    const int q = qgroup * kQueries + i;
    sm.floors[i] = q < a.nq ? a.thresholds[q] : ~0u;
    reinterpret_cast<float*>(sm.floor_pairs)[i] = floor_float(sm.floors[i]);
  }
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) Full::init(&sm.full[s], 1), Empty::init(&sm.empty[s], 128);
    Full::init(&sm.queries_full, 1);
    Empty::init(&sm.mma_turn[0], 128), Empty::init(&sm.mma_turn[1], 128);
    cutlass::arch::fence_barrier_init();
  }
  __syncthreads();

  // Item i of a block: column block i % kblocks of its (i / kblocks)-th row tile, in stage i % S
  // at the (i / S)-th turn of the ring (the barriers' parity).
  if (wg == 2) {
    cutlass::arch::warpgroup_reg_dealloc<40>();
    if (threadIdx.x == 256) {
      Tensor mQ = tma_queries.get_tma_tensor(make_shape(a.nq, a.ldg));
      Tensor gQ = local_tile(mQ, Shape<Int<kQueries>, Int<kKBlock>>{}, make_coord(qgroup, _));  // (queries, 64, kb)
      auto [tQg, tQs] = tma_partition(tma_queries, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sQ), group_modes<0, 2>(gQ));
      Full::arrive_and_expect_tx(&sm.queries_full, static_cast<uint32_t>(kblocks * kQueries * kKBlock * 2));
      for (int kb = 0; kb < kblocks; ++kb) copy(tma_queries.with(sm.queries_full), tQg(_, kb), tQs(_, kb));

      Tensor mR = tma_rows.get_tma_tensor(make_shape(a.rows, a.ldg));
      Tensor gR = local_tile(mR, Shape<Int<kRowTile>, Int<kKBlock>>{}, make_coord(_, _));  // (64, 64, tile, kb)
      auto [tRg, tRs] = tma_partition(tma_rows, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sR), group_modes<0, 2>(gR));
      StageRing ring;
      for (long long t = part; t < tiles; t += parts) {
        const int tile = static_cast<int>(t * tile_stride);
        for (int kb = 0; kb < kblocks; ++kb, ring.advance(1, S)) {
          Empty::wait(&sm.empty[ring.stage], ring.phase ^ 1u);  // first turn: free
          Full::arrive_and_expect_tx(&sm.full[ring.stage], static_cast<uint32_t>(C::kStageBytes));
          copy(tma_rows.with(sm.full[ring.stage]), tRg(_, tile, kb), tRs(_, ring.stage));
        }
      }
    }
  } else {
    cutlass::arch::warpgroup_reg_alloc<232>();
    const int c = wg;  // this warpgroup takes the block's row tiles c, c + 2, ...
    const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32, g = lane / 4, t4 = lane % 4;
    typename C::Mma mma;
    auto thr = mma.get_thread_slice(threadIdx.x % 128);
    Tensor tCrR = thr.make_fragment_A(thr.partition_A(sR));  // descriptors: (mma, 1, k16 steps, stage)
    Tensor tCrQ = thr.make_fragment_B(thr.partition_B(sQ));  // (mma, 1, k16 steps, kb)
    Tensor acc = partition_fragment_C(mma, Shape<Int<kRowTile>, Int<kQueries>>{});

    // The accumulators' places (the PTX ISA's wgmma D layout, as CuTe's CLayout_64xN): value i
    // of a thread is row 16 warp + g + 8 ((i >> 1) & 1), query 8 (i >> 2) + 2 t4 + (i & 1).
    const int me = threadIdx.x;  // 0 ... 255: a consumer thread
    Full::wait(&sm.queries_full, 0);

    StageRing ring;
    ring.advance(c * kblocks, S);  // warpgroup 1 starts at the block's second tile
    unsigned turns = 0;            // tiles this warpgroup has multiplied
    for (long long t = part + c * parts; t < tiles; t += 2 * parts) {
      const long long r0 = t * tile_stride * kRowTile + warp * 16 + g;  // this thread's rows r0 and r0 + 8
      const float inv0 = r0 < a.rows ? __ldg(a.inv_norms + r0) : 0.0f;
      const float inv1 = r0 + 8 < a.rows ? __ldg(a.inv_norms + r0 + 8) : 0.0f;
      // ordered: the warpgroups take turns issuing a tile's MMAs (CUTLASS's ping-pong order), so
      // that one's run whole on the tensor cores while the other filters, not interleaved with it.
      if (ordered && (c == 1 || turns > 0)) Empty::wait(&sm.mma_turn[c], (c == 1 ? turns : turns - 1) & 1u);
      mma.accumulate_ = GMMA::ScaleOut::Zero;
      int prev = -1;
      // One stage's MMAs (kSteps of its 16-column steps), straight-line code: a condition around
      // a wgmma, even a warp-uniform one, makes ptxas serialise every wgmma of the kernel
      // (C7520; measured 3.6 against 3.2 ms at B = 1,024).
      auto stage = [&](int kb, auto steps) {
        const int s = ring.stage;
        Full::wait(&sm.full[s], ring.phase);
        warpgroup_fence_operand(acc);
        warpgroup_arrive();
#pragma unroll
        for (int k = 0; k < decltype(steps)::value; ++k) {
          cute::gemm(mma, tCrR(_, _, k, s), tCrQ(_, _, k, kb), acc);
          mma.accumulate_ = GMMA::ScaleOut::One;
        }
        warpgroup_commit_batch();
        warpgroup_wait<1>();  // the previous stage's MMAs are done: release it
        warpgroup_fence_operand(acc);
        if (prev >= 0) Empty::arrive(&sm.empty[prev]);
        prev = s;
        ring.advance(1, S);
      };
      for (int kb = 0; kb + 1 < kblocks; ++kb) stage(kb, Int<kKBlock / 16>{});
      stage(kblocks - 1, Int<kLastSteps>{});
      if (ordered) Empty::arrive(&sm.mma_turn[1 - c]);
      ++turns;
      warpgroup_wait<0>();
      warpgroup_fence_operand(acc);
      Empty::arrive(&sm.empty[prev]);
      ring.advance(kblocks, S);  // past the other warpgroup's tile

      // Each score against its query's float floor (one multiply and one compare, the code kept
      // short: a fully unrolled offer() a score made the kernel's code outgrow the instruction
      // cache). Those that pass go to the thread's stack, kStack a round, and are offered from
      // there (the exact key compare, the append); more than kStack: another round, for the next.
      const int q0 = qgroup * kQueries;
      unsigned done = 0, seen;
      do {
        seen = 0;
        // Opaque to the compiler each round, so that it does not keep all the products live
        // across rounds (that spilled).
        float inv[2] = {inv0, inv1};
        asm volatile("" : "+f"(inv[0]), "+f"(inv[1]));
        // The floors loaded 8 pairs at a time, ahead of the stack's stores (which the compiler
        // cannot tell apart from them: loaded one pair before each branch, every branch waited on
        // its load); one branch for 4 scores (predicated pushes without it, or a branch for 8,
        // measured slower).
#pragma unroll
        for (int jg = 0; jg < kQueries / 64; ++jg) {
          float2 f[8];
#pragma unroll
          for (int u = 0; u < 8; ++u) f[u] = sm.floor_pairs[4 * (8 * jg + u) + t4];
#pragma unroll
          for (int u = 0; u < 8; ++u) {
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
                float x = acc(i0 + e);
                asm volatile("" : "+f"(x));
                const bool pass = !(x * inv[e >> 1] < ((e & 1) ? f[u].y : f[u].x));
                const unsigned slot = seen - done;
                if (pass && slot < kStack) sm.stack[slot][me] = make_float2(x, __int_as_float(i0 + e));
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
            const unsigned k = filter_scan::score_key(v.x, h ? inv1 : inv0);
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
  }
#endif
}

}  // namespace distancies
