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

// Thread 0 waits for a request newer than `seen` and the block reads it from shared memory.
// Block 0 polls the host's doorbell (a pause between reads keeps its polls from crowding the
// answers' writes on the bus) and copies the request to `mirror`; every other block polls that.
__device__ __forceinline__ void wait_for_request(ServeBell* bell, ServeRequest* mirror, unsigned seen,
                                                 ServeRequest& req) {
  __shared__ ServeRequest shared_req;
  if (threadIdx.x == 0) {
    if (blockIdx.x == 0) {
      cuda::atomic_ref<unsigned, cuda::thread_scope_system> seq(bell->seq);
      unsigned s;
      while ((s = seq.load(cuda::memory_order_acquire)) == seen) __nanosleep(32);
      const volatile ServeBell* b = bell;
      mirror->stop = static_cast<unsigned>(b->stop);
      mirror->first_tile = static_cast<unsigned>(b->first_tile);
      mirror->ntiles = static_cast<unsigned>(b->ntiles);
      mirror->counts_at = b->counts_at;
      cuda::atomic_ref<unsigned, cuda::thread_scope_device>(mirror->seq).store(s, cuda::memory_order_release);
    } else {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> seq(mirror->seq);
      while (seq.load(cuda::memory_order_acquire) == seen) {
      }
    }
    // Stable until every block has answered it: no next request comes before that.
    const volatile ServeRequest* m = mirror;
    shared_req.seq = m->seq;
    shared_req.stop = m->stop;
    shared_req.first_tile = m->first_tile;
    shared_req.ntiles = m->ntiles;
    shared_req.counts_at = m->counts_at;
  }
  __syncthreads();
  req = shared_req;
  __syncthreads();  // every thread has its copy before thread 0 may wait for the next
}

// Tile(a, t) answers tile t of a.tiles with the whole block (probe_tile, packed_probe_tile).
template <int kThreads, class Tile>
__global__ void __launch_bounds__(kThreads)
    resident_serve_kernel(IntersectArgs a, ServeBell* bell, ServeRequest* mirror, Tile tile) {
  unsigned seen = 0;
  ServeRequest req;
  for (;;) {
    wait_for_request(bell, mirror, seen, req);
    seen = req.seq;
    if (req.stop) return;
    IntersectArgs r = a;
    r.tiles = a.tiles + req.first_tile;
    r.tile_counts = a.cand + req.counts_at;
    const int ntiles = static_cast<int>(req.ntiles);
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
