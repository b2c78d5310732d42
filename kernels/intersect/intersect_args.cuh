// What the posting-list kernels read and write. The index sits on the device as one array of
// ids with per-list offsets; a batch is a set of queries (terms shortest first) cut into tiles
// of at most kIntersectTile ids of each query's shortest list. A marking kernel writes, for
// each id of each shortest list, the id and a flag (1: in every list), and each tile's count;
// cub::DeviceSelect::Flagged then packs the flagged ids, query after query, in order.
#pragma once
#include <cstdint>

namespace distancies {

constexpr int kIntersectMaxTerms = 5;
constexpr unsigned kIntersectTile = 1024;  // shortest-list ids per block
constexpr int kIntersectBuckets = 512;     // Hash(512): the id range cut in 512 slices

// MergePath tiles are ranges of steps of the merge of a query's two shortest lists; the others'
// are ranges of its shortest list.
// Packed is Probe over the packed copy of the lists (variants/intersect/packed_lists.hpp).
// Roaring and SimdGallop are the CPU peers of the batch (every core; no kernel).
enum class IntersectMethod { Svs, Adp, Hash, Gallop, Bitmap, MergePath, Staged, Probe, Packed, Roaring, SimdGallop };

struct DeviceQuery {
  unsigned terms[kIntersectMaxTerms];  // shortest list first
  int nterms;
  unsigned long long cand_base;  // where this query's shortest list starts in cand/flags
};

struct IntersectTile {
  int query;
  unsigned begin, end;  // positions in the query's shortest list
};

// The packed copy of the lists (PackedLists's arrays; packed_decode.hpp reads them).
struct PackedIndexArgs {
  const std::uint32_t* words;
  const std::uint64_t* block_word;
  const std::uint8_t* block_bits;
  const std::uint32_t* anchors;
  const std::uint64_t* list_block;   // lists + 1
  const std::uint64_t* list_anchor;  // lists + 1
  const std::uint64_t* lengths;
};

struct IntersectArgs {
  const unsigned* ids;                // every list, concatenated
  const unsigned long long* offsets;  // lists + 1
  const unsigned* hash_starts;        // per list, kIntersectBuckets + 1 offsets into the list
  unsigned max_id;                    // for the bucket of an id
  const long long* bitmap_slot;       // per list: its bitmap's index, or -1
  const unsigned* bitmaps;            // slot * bitmap_words words, bit id set when id is in the list
  unsigned long long bitmap_words;
  PackedIndexArgs packed;  // set for the rows that read packed lists
  const DeviceQuery* queries;
  const IntersectTile* tiles;
  unsigned* cand;         // the shortest lists' ids, at each query's cand_base (compacting kernels:
                          // each tile's answers, at the tile's first position)
  unsigned char* flags;   // 1: the id is in every list of its query
  unsigned* tile_counts;  // ids found per tile
};

__device__ __forceinline__ unsigned intersect_bucket(unsigned id, unsigned max_id) {
  return static_cast<unsigned>(static_cast<unsigned long long>(id) * kIntersectBuckets /
                               (static_cast<unsigned long long>(max_id) + 1ull));
}

}  // namespace distancies
