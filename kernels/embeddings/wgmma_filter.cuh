// The filtered scan's many-query walk on Hopper's warpgroup MMA (sm_90a), built on CUTLASS's
// CuTe: the shape of a GEMM mainloop with the filter as its epilogue. A block keeps kQueries
// queries resident in shared memory for its whole life (loaded once by TMA) and streams 64-row
// tiles of the model through a ring of stages (one 128-byte-wide TMA box a stage). The consumer
// warpgroups (two, or three for blocks of up to 64 queries: consumers_for) take the row tiles in
// turn, so that one multiplies while the others filter their 64 x kQueries scores; the last
// warpgroup only issues the copies (one thread), its registers handed to the others (setmaxnreg:
// 232 a consumer thread of two, for 128 accumulators at kQueries = 256). The scores stay in
// registers and are never written to memory: the epilogue (`Epi`) compares each with its query's
// threshold and sends the few that pass to the exact key compare and the append. Two epilogues:
// wgmma_filter_f16.cuh (fp16 operands, fp32 scores) and wgmma_filter_i8.cuh (int8 operands, exact
// int32 scores). The tensor cores read both operands from shared memory (wgmma SS); the rows'
// boxes past the row's end are zero-filled by TMA, which pads D = 300 in shared memory only.
//
// An epilogue Epi gives: Element and Acc (the MMA's operand and accumulator types), kKBlock
// (elements of a 128-byte box) and kKStep (the MMA's K), kMaxKBlocks; Args (its kernel argument);
// Smem<kQueries> (its shared memory); and
//   load(sm, a, x, qgroup)                  every thread, once, before the block's barrier;
//   tile = begin_tile(a, x, t)              a consumer thread, before its tile's MMAs;
//   after_issue(sm, a, x, tile, c, turn)    the same, once its tile's MMAs are issued;
//   filter(acc, sm, a, x, tile, qgroup, c, turn)  the scores, once the MMAs are done;
//   finish(sm, a, x, qgroup)                every consumer thread, after its last tile.
#pragma once
#include <cutlass/arch/barrier.h>
#include <cutlass/arch/reg_reconfig.h>
#include <cute/tensor.hpp>

#include "kernels/embeddings/mma_filter_scan.cuh"
#include "kernels/embeddings/stage_ring.hpp"
#include "kernels/embeddings/tile_walk.hpp"

namespace distancies {

namespace wgmma_filter {

constexpr int kRowTile = 64;  // rows a consumer warpgroup multiplies at a time (the wgmma's M)
// Consumer warpgroups a block: three where a block keeps few queries (a small batch: a tile's
// fixed work, not its width, sets the pace there, and the accumulators are few), else two (the
// registers of up to 128 accumulators a thread). The producer warpgroup comes after them.
constexpr int consumers_for(int queries) { return queries <= 64 ? 3 : 2; }
constexpr int threads_for(int queries) { return (consumers_for(queries) + 1) * 128; }
// The producer's registers a thread once it gives the rest away (setmaxnreg), and a consumer's
// then: the register file (64 K) less the producer's, shared by the consumers, in steps of 8
// (232 for two consumers, 152 for three).
constexpr int kProducerRegs = 40;
constexpr int consumer_regs(int consumers) { return (65536 - 128 * kProducerRegs) / (128 * consumers) / 8 * 8; }
static_assert(consumer_regs(2) == 232 && consumer_regs(3) == 152, "the register split");
// A consumer thread's scores of a 64-row tile come in 8-column chunks, 4 a chunk (AccPlace); the
// epilogues take them kGroup chunks at a time (8, fewer where a block keeps fewer than 64 queries).
template <int kQueries>
struct ScoreChunks {
  static constexpr int kChunks = kQueries / 8;
  static constexpr int kGroup = kChunks < 8 ? kChunks : 8;
};
constexpr std::size_t kSmemLimit = 227 * 1024;
constexpr int kStack = 4;  // passing scores a consumer thread collects per round (shared memory)

// Everything that follows from the operands and kQueries: shared-memory layouts (CuTe's 128-byte
// swizzled K-major atoms, what wgmma and TMA both read), the MMA (64 x kQueries x kKStep), the
// ring depth that fills the shared memory, and the shared storage.
template <class Epi, int kQueries>
struct Config {
  using E = typename Epi::Element;
  static constexpr int kKBlock = Epi::kKBlock;
  static constexpr std::size_t kQueryBytes = std::size_t(kQueries) * kKBlock * Epi::kMaxKBlocks * sizeof(E);
  static constexpr std::size_t kStageBytes = std::size_t(kRowTile) * kKBlock * sizeof(E);
  static constexpr std::size_t kEpilogueBytes = sizeof(typename Epi::template Smem<kQueries>) + 1024;
  static constexpr int kStages = static_cast<int>((kSmemLimit - kQueryBytes - kEpilogueBytes) / kStageBytes);
  static_assert(kStages >= 4, "the ring must hold more than a row tile's columns");
  using QueryLayout = decltype(cute::tile_to_shape(
      cute::GMMA::Layout_K_SW128_Atom<E>{},
      cute::make_shape(cute::Int<kQueries>{}, cute::Int<kKBlock>{}, cute::Int<Epi::kMaxKBlocks>{})));
  using RowLayout = decltype(cute::tile_to_shape(
      cute::GMMA::Layout_K_SW128_Atom<E>{},
      cute::make_shape(cute::Int<kRowTile>{}, cute::Int<kKBlock>{}, cute::Int<kStages>{})));
  using Mma = decltype(cute::make_tiled_mma(
      cute::GMMA::ss_op_selector<E, E, typename Epi::Acc,
                                 cute::Shape<cute::Int<kRowTile>, cute::Int<kQueries>, cute::Int<kKBlock>>,
                                 cute::GMMA::Major::K, cute::GMMA::Major::K>()));
  struct Smem {
    alignas(1024) cute::ArrayEngine<E, cute::cosize_v<QueryLayout>> queries;
    alignas(1024) cute::ArrayEngine<E, cute::cosize_v<RowLayout>> rows;
    alignas(8) uint64_t full[kStages];  // a stage's box landed (TMA transaction bytes)
    uint64_t empty[kStages];            // its warpgroup's MMAs are done with it (128 arrivals)
    uint64_t queries_full;
    uint64_t mma_turn[consumers_for(kQueries)];  // warpgroup c may issue its tile's MMAs (its turn came)
    typename Epi::template Smem<kQueries> epi;
  };
  static_assert(sizeof(Smem) <= kSmemLimit, "the block's shared memory");
};

}  // namespace wgmma_filter

// Block b serves query group b % qgroups (kQueries queries from qgroup * kQueries) and the row
// tiles part, part + parts, ... (part = b / qgroups) of those tile_stride walks (TileWalk): the
// qgroups blocks of a part read
// the same tiles at about the same time, so each tile comes from DRAM once and from L2 for the
// others (L2 prefetches ahead of the loads measured no faster). kblocks: 128-byte column blocks
// of a row (<= kMaxKBlocks); kLastSteps: the MMA steps taken in the last one (fp16, D = 300, ldg =
// 304: 3 of 4, a twentieth of the MMAs skipped; int8: 2 of 4), the columns past ldg being TMA's
// zeros.
template <class Epi, int kQueries, int kLastSteps, class TmaRows, class TmaQueries>
__global__ void __launch_bounds__(wgmma_filter::threads_for(kQueries), 1)
    wgmma_filter_kernel(FilterScanArgs a, typename Epi::Args x, int kblocks, int tile_stride, int ordered,
                        CUTE_GRID_CONSTANT TmaRows const tma_rows, CUTE_GRID_CONSTANT TmaQueries const tma_queries) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // wgmma and setmaxnreg are sm_90a's; the host runs this walk on 9.0 devices only
#elif defined(__CUDA_ARCH__)
  using namespace cute;
  using namespace wgmma_filter;
  using C = Config<Epi, kQueries>;
  using E = typename Epi::Element;
  using Full = cutlass::arch::ClusterTransactionBarrier;
  using Empty = cutlass::arch::ClusterBarrier;
  constexpr int S = C::kStages;
  constexpr int kKBlock = Epi::kKBlock;
  constexpr int kConsumers = consumers_for(kQueries);
  extern __shared__ __align__(1024) unsigned char wgmma_filter_smem[];
  auto& sm = *reinterpret_cast<typename C::Smem*>(wgmma_filter_smem);
  Tensor sQ = make_tensor(make_smem_ptr(sm.queries.begin()), typename C::QueryLayout{});  // (queries, kKBlock, kb)
  Tensor sR = make_tensor(make_smem_ptr(sm.rows.begin()), typename C::RowLayout{});       // (64 rows, kKBlock, stage)

  const int wg = threadIdx.x / 128;
  const int qgroup = static_cast<int>(blockIdx.x) % a.qgroups;
  const long long part = blockIdx.x / a.qgroups, parts = gridDim.x / a.qgroups;
  const long long all_tiles = (static_cast<long long>(a.rows) + kRowTile - 1) / kRowTile;
  const TileWalk walk{all_tiles, tile_stride};
  const long long tiles = walk.count();
  Epi::template load<kQueries>(sm.epi, a, x, qgroup);
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) Full::init(&sm.full[s], 1), Empty::init(&sm.empty[s], 128);
    Full::init(&sm.queries_full, 1);
    for (int w = 0; w < kConsumers; ++w) Empty::init(&sm.mma_turn[w], 128);
    cutlass::arch::fence_barrier_init();
  }
  __syncthreads();

  // Item i of a block: column block i % kblocks of its (i / kblocks)-th row tile, in stage i % S
  // at the (i / S)-th turn of the ring (the barriers' parity).
  if (wg == kConsumers) {
    cutlass::arch::warpgroup_reg_dealloc<kProducerRegs>();
    if (threadIdx.x == kConsumers * 128) {
      Tensor mQ = tma_queries.get_tma_tensor(make_shape(a.nq, a.ldg));
      Tensor gQ =
          local_tile(mQ, Shape<Int<kQueries>, Int<kKBlock>>{}, make_coord(qgroup, _));  // (queries, kKBlock, kb)
      auto [tQg, tQs] =
          tma_partition(tma_queries, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sQ), group_modes<0, 2>(gQ));
      Full::arrive_and_expect_tx(&sm.queries_full, static_cast<uint32_t>(kblocks * kQueries * kKBlock * sizeof(E)));
      for (int kb = 0; kb < kblocks; ++kb) copy(tma_queries.with(sm.queries_full), tQg(_, kb), tQs(_, kb));

      Tensor mR = tma_rows.get_tma_tensor(make_shape(a.rows, a.ldg));
      Tensor gR = local_tile(mR, Shape<Int<kRowTile>, Int<kKBlock>>{}, make_coord(_, _));  // (64, kKBlock, tile, kb)
      auto [tRg, tRs] = tma_partition(tma_rows, Int<0>{}, Layout<_1>{}, group_modes<0, 2>(sR), group_modes<0, 2>(gR));
      StageRing ring;
      for (long long t = part; t < tiles; t += parts) {
        const int tile = static_cast<int>(walk.tile(t));
        for (int kb = 0; kb < kblocks; ++kb, ring.advance(1, S)) {
          Empty::wait(&sm.empty[ring.stage], ring.phase ^ 1u);  // first turn: free
          Full::arrive_and_expect_tx(&sm.full[ring.stage], static_cast<uint32_t>(C::kStageBytes));
          copy(tma_rows.with(sm.full[ring.stage]), tRg(_, tile, kb), tRs(_, ring.stage));
        }
      }
    }
  } else {
    cutlass::arch::warpgroup_reg_alloc<consumer_regs(kConsumers)>();
    const int c = wg;  // this warpgroup takes the block's row tiles c, c + kConsumers, ...
    typename C::Mma mma;
    auto thr = mma.get_thread_slice(threadIdx.x % 128);
    Tensor tCrR = thr.make_fragment_A(thr.partition_A(sR));  // descriptors: (mma, 1, k steps, stage)
    Tensor tCrQ = thr.make_fragment_B(thr.partition_B(sQ));  // (mma, 1, k steps, kb)
    Tensor acc = partition_fragment_C(mma, Shape<Int<kRowTile>, Int<kQueries>>{});
    Full::wait(&sm.queries_full, 0);

    StageRing ring;
    ring.advance(c * kblocks, S);  // warpgroup c starts at the block's (c + 1)-th tile
    unsigned turns = 0;            // tiles this warpgroup has multiplied
    for (long long t = part + c * parts; t < tiles; t += kConsumers * parts) {
      auto tile = Epi::begin_tile(a, x, walk.tile(t));
      // ordered: the warpgroups take turns issuing a tile's MMAs (CUTLASS's ping-pong order, round
      // robin), so that one's run whole on the tensor cores while the others filter. Warpgroup c
      // waits for c - 1's issue of the same round, warpgroup 0 for the last one's of the round before.
      if (ordered && (c > 0 || turns > 0)) Empty::wait(&sm.mma_turn[c], (c > 0 ? turns : turns - 1) & 1u);
      mma.accumulate_ = GMMA::ScaleOut::Zero;
      int prev = -1;
      // One stage's MMAs (kSteps of its steps), straight-line code: a condition around a wgmma,
      // even a warp-uniform one, makes ptxas serialise every wgmma of the kernel (C7520, and
      // measurably slower: docs/batch.md).
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
      for (int kb = 0; kb + 1 < kblocks; ++kb) stage(kb, Int<kKBlock / Epi::kKStep>{});
      stage(kblocks - 1, Int<kLastSteps>{});
      if (ordered) Empty::arrive(&sm.mma_turn[(c + 1) % kConsumers]);
      Epi::template after_issue<kQueries>(sm.epi, a, x, tile, c, turns);
      warpgroup_wait<0>();
      warpgroup_fence_operand(acc);
      Empty::arrive(&sm.empty[prev]);
      ring.advance((kConsumers - 1) * kblocks, S);  // past the other warpgroups' tiles
      Epi::template filter<kQueries>(acc, sm.epi, a, x, tile, qgroup, c, turns);
      ++turns;
    }
    Epi::template finish<kQueries>(sm.epi, a, x, qgroup);
  }
#endif
}

}  // namespace distancies
