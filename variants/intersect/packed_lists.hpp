// Compressed posting lists: each list in blocks of kPackBlock ids; a block keeps the gaps between
// its ids (id - previous id - 1) bit-packed at the block's width (the bits of its widest gap; 0
// for a run of consecutive ids) in 32-bit words; every kPackAnchor-th id of a list is kept whole
// beside them (its anchors, the blocks' first ids among them). A search for an id searches a
// list's anchors and sums at most kPackAnchor - 1 gaps after one (any gap is at a known bit
// offset), and a block is the shape a warp decodes with four ids a lane and one prefix sum. This is the host codec
// (pack, unpack, the bytes a device copy holds); packed_device.hpp decodes it on the GPU and `packed_coarse_batch`
// intersects it there.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/intersect/packed_decode.hpp"
#include "variants/intersect/posting_lists.hpp"

namespace distancies::intersect {

constexpr int kPackBlock = packed_decode::kBlockIds;    // 128
constexpr int kPackAnchor = packed_decode::kAnchorIds;  // 8: ids from one anchor to the next
constexpr int kAnchorsPerBlock = packed_decode::kAnchorsPerBlock;

struct PackedLists {
  std::vector<std::uint32_t> words;           // every block's packed gaps
  std::vector<std::uint32_t> anchors;         // each list's ids at positions 0, 8, 16, ..., list after list
  std::vector<std::uint64_t> block_word;      // where each block's gaps start in `words`
  std::vector<std::uint8_t> block_bits;       // each block's gap width, 0 .. 32
  std::vector<std::uint64_t> list_block{0};   // list i is blocks [list_block[i], list_block[i + 1])
  std::vector<std::uint64_t> list_anchor{0};  // list i's anchors start at list_anchor[i]
  std::vector<std::uint64_t> lengths;         // ids in list i

  std::size_t lists() const { return lengths.size(); }
  std::size_t blocks(std::size_t list) const { return list_block[list + 1] - list_block[list]; }
  std::size_t total_blocks() const { return block_bits.size(); }
  // The first id of block `block` of `list`.
  std::uint32_t first_id(std::size_t list, std::size_t block) const {
    return anchors[list_anchor[list] + block * kAnchorsPerBlock];
  }
  std::size_t bytes() const;                         // every array above, as a device copy would hold them
  std::uint64_t list_words(std::size_t list) const;  // the words of list's gaps
};

// The bits of `gap` (0 for 0, 32 for gaps of 2^31 and more).
int gap_bits(std::uint32_t gap);

PackedLists pack_lists(const PostingIndex& index);

// The ids of block `block` of list `list` into `out` (room for kPackBlock); returns how many
// (kPackBlock, or fewer in a list's last block). Throws Error for a list or block out of range.
// The device search's view of `list` (packed_decode::contains).
packed_decode::ListView list_view(const PackedLists& packed, std::size_t list);

int unpack_block(const PackedLists& packed, std::size_t list, std::size_t block, std::uint32_t* out);

std::vector<std::uint32_t> unpack_list(const PackedLists& packed, std::size_t list);

}  // namespace distancies::intersect
