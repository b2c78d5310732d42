// Compressed posting lists: each list in blocks of kPackBlock ids; a block keeps its first id
// whole and the gaps after it (id - previous id - 1) bit-packed at the block's width (the bits of
// its widest gap; 0 for a run of consecutive ids) in 32-bit words. The blocks' first ids are kept
// apart, uncompressed, so that a search for an id finds the one block that can hold it and
// decodes that block alone, the layout a warp decodes with four ids a lane and one prefix sum.
// This is the host codec (pack, unpack, the bytes a device copy holds); packed_device.hpp decodes
// it on the GPU, which the intersections do not call yet (docs/intersection.md, "Compressed lists").
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "variants/intersect/posting_lists.hpp"

namespace distancies::intersect {

constexpr int kPackBlock = 128;

struct PackedLists {
  std::vector<std::uint32_t> words;          // every block's packed gaps
  std::vector<std::uint32_t> block_first;    // each block's first id
  std::vector<std::uint64_t> block_word;     // where each block's gaps start in `words`
  std::vector<std::uint8_t> block_bits;      // each block's gap width, 0 .. 32
  std::vector<std::uint64_t> list_block{0};  // list i is blocks [list_block[i], list_block[i + 1])
  std::vector<std::uint64_t> lengths;        // ids in list i

  std::size_t lists() const { return lengths.size(); }
  std::size_t blocks(std::size_t list) const { return list_block[list + 1] - list_block[list]; }
  std::size_t bytes() const;  // every array above, as a device copy would hold them
};

// The bits of `gap` (0 for 0, 32 for gaps of 2^31 and more).
int gap_bits(std::uint32_t gap);

PackedLists pack_lists(const PostingIndex& index);

// The ids of block `block` of list `list` into `out` (room for kPackBlock); returns how many
// (kPackBlock, or fewer in a list's last block). Throws Error for a list or block out of range.
int unpack_block(const PackedLists& packed, std::size_t list, std::size_t block, std::uint32_t* out);

std::vector<std::uint32_t> unpack_list(const PackedLists& packed, std::size_t list);

}  // namespace distancies::intersect
