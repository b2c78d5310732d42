// Running the registered intersection variants on the GPU: the index resident on the device
// (explicit cudaMalloc or managed memory, the study's two habits), a batch of queries cut into
// tiles of their shortest lists, the marking kernel and cub::DeviceSelect::Flagged to pack
// the answers.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "harness/intersect/index.hpp"
#include "kernels/intersect/intersect_args.cuh"
#include "runtime/device.hpp"
#include "variants/intersect/intersect_registry.hpp"
#include "variants/intersect/packed_lists.hpp"

namespace distancies::intersect {

enum class IndexMemory { Explicit, Managed };
const char* memory_name(IndexMemory m);  // explicit, managed

// One device (or managed) allocation, freed with the owner.
class GpuAllocation {
 public:
  GpuAllocation() = default;
  GpuAllocation(std::size_t bytes, IndexMemory kind, const char* what);
  ~GpuAllocation();
  GpuAllocation(GpuAllocation&& o) noexcept;
  GpuAllocation& operator=(GpuAllocation&& o) noexcept;
  GpuAllocation(const GpuAllocation&) = delete;
  GpuAllocation& operator=(const GpuAllocation&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  void upload(const void* src, std::size_t bytes);  // a copy (explicit) or a host write (managed)
  std::size_t bytes() const { return ptr_ ? bytes_ : 0; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  IndexMemory kind_ = IndexMemory::Explicit;
};

// The index on the device, with its Hash(512) tables and bitmaps of its long lists (lists of
// at least (max_id + 1) / 256 ids, while they fit in bitmap_budget bytes), and a packed copy of
// its lists made on first use (the rows that read packed lists).
class GpuIndex {
 public:
  GpuIndex(const PostingIndex& index, IndexMemory memory, std::size_t bitmap_budget = std::size_t(1) << 30);
  ~GpuIndex();
  IntersectArgs args() const;  // the index fields filled in
  PackedIndexArgs packed_args() const;
  std::size_t bitmapped_lists() const { return bitmapped_; }
  const PostingIndex& host() const { return index_; }
  const PackedLists& packed_host() const;
  // Device bytes a row reads its lists from: the ids and offsets, or the packed copy.
  std::uint64_t list_bytes(bool packed) const;
  // Device bytes of everything a row's searches use besides: Hash(512) tables (plain rows),
  // bitmaps and their slots (both).
  std::uint64_t aux_bytes(bool packed) const;

 private:
  struct Packed;
  const Packed& packed() const;
  const PostingIndex& index_;
  IndexMemory memory_;
  GpuAllocation ids_, offsets_, hash_, slots_, bitmaps_;
  unsigned long long bitmap_words_ = 0;
  std::size_t bitmapped_ = 0;
  mutable std::unique_ptr<Packed> packed_;
};

// A batch of queries on the device, ready to run any GPU variant (and the CPU ones, for
// symmetry: run_serial). Answers are per query, ids increasing.
class GpuBatch {
 public:
  GpuBatch(const GpuIndex& index, const std::vector<Query>& queries);
  ~GpuBatch();
  GpuBatch(const GpuBatch&) = delete;
  GpuBatch& operator=(const GpuBatch&) = delete;
  // Another batch of queries in the buffers kept (made again only where too small), as a service
  // does batch after batch: each query's tiles cut on the host and uploaded.
  void assign(const std::vector<Query>& queries);
  // Enqueues the variant on `stream` (a per-query variant synchronises after each query).
  void run(const IntersectVariant& v, cudaStream_t stream);
  // Query q alone, as a caller waiting for its answer does: its tiles' launch, the kernel writing
  // their answers and counts straight to page-locked host memory (no copy), one synchronisation,
  // the answer assembled. The compacting batch rows.
  std::vector<std::uint32_t> run_one(const IntersectVariant& v, std::size_t q, cudaStream_t stream);
  std::vector<std::vector<std::uint32_t>> answers();  // of the last run (synchronises)

  std::size_t queries() const { return host_queries_.size(); }
  std::uint64_t touched_bytes() const { return touched_bytes_; }
  std::uint64_t shortest_ids() const { return shortest_ids_; }

 private:
  const GpuIndex& index_;
  std::vector<DeviceQuery> host_queries_;
  // Tiles of the shortest lists, or of the merges of the two shortest (merge-path rows).
  struct Tiling {
    std::vector<int> begin;  // per query, the index of its first tile; one more at the end
    GpuAllocation tiles, counts;
  };
  Tiling shortest_, merged_;
  const Tiling* last_tiling_ = &shortest_;
  std::uint64_t touched_bytes_ = 0, shortest_ids_ = 0;
  GpuAllocation queries_, cand_, flags_, out_, num_, temp_;
  std::size_t temp_bytes_ = 0;
  bool last_batched_ = true;
  bool last_compacts_ = false;
  IntersectArgs args_for(const IntersectVariant& v) const;
  std::uint64_t shortest_length(std::size_t q)
      const;  // query q's candidates (its shortest list's ids)  // the index's, the batch's, packed where v reads it
  GpuAllocation solo_queries_;           // the queries again, each at candidate position 0 (run_one; ensure_solo)
  std::vector<unsigned> merge_lengths_;  // per query, its two shortest lists' ids (ensure_merged)
  bool merged_ready_ = false, solo_ready_ = false;
  PinnedBuffer staging_;          // the queries and tiles on their way up (stage_upload)
  cudaEvent_t staged_ = nullptr;  // their copies done
  void stage_upload(const std::vector<IntersectTile>& tiles);
  void ensure_merged();
  void ensure_solo();
  PinnedBuffer pinned_;         // run_one's answers, then its tiles' counts (mapped: the device writes them)
  PinnedBuffer answers_;        // answers()'s: the batch's answers, packed, in one copy
  GpuAllocation pack_offsets_;  // answers()'s: where each tile's answers go
  GpuAllocation scan_temp_;     // answers()'s: the offsets' scan scratch
  unsigned* pinned_device_ = nullptr;
};

}  // namespace distancies::intersect
