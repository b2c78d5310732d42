// DotProduct variants: one line each. The dispatch below sizes the grid from the agent's
// policy (threads per row, block threads) and stages the query in dynamic shared memory.
#include <string>

#include "kernels/embeddings/coalesced_dot.cuh"
#include "kernels/embeddings/dot_kernel.cuh"
#include "kernels/embeddings/float4_warp_dot.cuh"
#include "kernels/embeddings/shared_reduce_dot.cuh"
#include "kernels/embeddings/thread_per_row_dot.cuh"
#include "kernels/embeddings/warp_shuffle_dot.cuh"
#include "runtime/launch.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {
namespace {

template <class Agent>
void launch_dot(const DotArgs& a, cudaStream_t s) {
  if (a.rows <= 0) return;
  constexpr int rows_per_block = Agent::kRowsPerBlock;
  const std::size_t smem = static_cast<std::size_t>(a.ld) * sizeof(float);
  if (smem > kDefaultDynamicSmemBytes)
    throw Error("dimension " + std::to_string(a.dim) + " exceeds the 12288 the dot kernels stage in shared memory");
  dot_kernel<Agent><<<blocks_for(a.rows, rows_per_block), Agent::kBlockThreads, smem, s>>>(a);
  CUDA_CHECK_LAUNCH();
}

template <class Agent>
DotVariant dot(const char* name, const char* description, const char* origin) {
  return {name, description, origin, Agent::kThreadsPerRow, &launch_dot<Agent>};
}

}  // namespace

namespace {

Table<DotVariant>& dot_table() {
  static Table<DotVariant> table(
      "embeddings", "dot", "dot variant",
      {
          dot<ThreadPerRowDot>("thread_per_row_dot", "1 thread/row, query in shared memory (uncoalesced)", "V1, V2"),
          dot<SharedReduceDot>("shared_reduce_dot", "8 threads/row, shared-memory reduction with __syncwarp", "V3"),
          dot<WarpShuffleDot>("warp_shuffle_dot", "8 threads/row, __shfl_down_sync reduction", "V4"),
          dot<CoalescedDot<4>>("coalesced_dot_4t", "4 threads/row: 16-byte runs, shuffle reduction",
                               "study, discarded"),
          dot<CoalescedDot<8>>("coalesced_dot_8t", "8 threads/row: 32-byte runs, shuffle reduction", "study, kept"),
          dot<CoalescedDot<16>>("coalesced_dot_16t", "16 threads/row: 64-byte runs, shuffle reduction",
                                "study, discarded"),
          dot<CoalescedDot<32>>("coalesced_dot_32t", "32 threads/row: 128-byte runs, shuffle reduction",
                                "study, discarded"),
          dot<Float4WarpDot<4>>("float4_warp_dot", "a warp per row, 16-byte loads, 4 rows per warp in flight",
                                "beyond the study"),
      });
  return table;
}

}  // namespace

const Table<DotVariant>& dot_variants() { return dot_table(); }
const DotVariant& add_dot_variant(DotVariant v) { return dot_table().add(std::move(v)); }

}  // namespace distancies
