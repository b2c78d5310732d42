// One query at a time without a launch a query: a kernel that stays resident and answers requests
// from a doorbell in mapped host memory (ServeBell). A launch and a synchronisation cost more than
// most single queries' work (docs/intersection.md, "One query at a time"); here the host writes the
// request, each block takes the tiles blockIdx.x, + gridDim.x, ... through the row's tile function
// (its answers and counts going straight to mapped host memory, as run_one's do), and signals
// its own done slot. Every block must be resident at once (a cooperative launch guarantees it),
// since a block that never ran would leave its tiles unanswered.
#pragma once
#include <cuda/atomic>

#include "kernels/intersect/intersect_args.cuh"

namespace distancies {

// Thread 0 waits for a request newer than `seen` (polling the host's memory; the pause keeps the
// grid's polls from flooding the bus) and the block reads it from shared memory.
__device__ __forceinline__ void wait_for_request(ServeBell* bell, unsigned seen, unsigned (&req)[5]) {
  __shared__ unsigned shared_req[5];
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_system> seq(bell->seq);
    unsigned s;
    while ((s = seq.load(cuda::memory_order_acquire)) == seen) __nanosleep(64);
    shared_req[0] = s;
    shared_req[1] = static_cast<unsigned>(bell->stop);
    shared_req[2] = static_cast<unsigned>(bell->first_tile);
    shared_req[3] = static_cast<unsigned>(bell->ntiles);
    shared_req[4] = bell->counts_at;
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 5; ++i) req[i] = shared_req[i];
  __syncthreads();  // every thread has its copy before thread 0 may wait for the next
}

// Tile(a, t) answers tile t of a.tiles with the whole block (probe_tile, packed_probe_tile).
template <int kThreads, class Tile>
__global__ void __launch_bounds__(kThreads) resident_serve_kernel(IntersectArgs a, ServeBell* bell, Tile tile) {
  unsigned seen = 0, req[5];
  for (;;) {
    wait_for_request(bell, seen, req);
    seen = req[0];
    if (req[1]) return;
    IntersectArgs r = a;
    r.tiles = a.tiles + req[2];
    r.tile_counts = a.cand + req[4];
    const int ntiles = static_cast<int>(req[3]);
    for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
      tile(r, t);
      __syncthreads();  // the tile's shared memory is used again by the next
    }
    // Every thread's answers reach the host before the block's done slot does.
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_system> done(bell->done[blockIdx.x]);
      done.store(seen, cuda::memory_order_release);
    }
  }
}

}  // namespace distancies
