#include "variants/intersect/packed_lists.hpp"

#include <algorithm>
#include <string>

#include "runtime/error.hpp"

namespace distancies::intersect {
namespace {

// Words that hold `gaps` gaps of `bits` bits.
std::uint64_t words_for(std::size_t gaps, int bits) { return (std::uint64_t(gaps) * bits + 31) / 32; }

void pack_block(const std::uint32_t* ids, int n, PackedLists& p) {
  std::uint32_t widest = 0;
  for (int i = 1; i < n; ++i) widest = std::max(widest, ids[i] - ids[i - 1] - 1);
  const int bits = gap_bits(widest);
  for (int a = 0; a < n; a += kPackAnchor) p.anchors.push_back(ids[a]);
  p.block_word.push_back(p.words.size());
  p.block_bits.push_back(static_cast<std::uint8_t>(bits));
  const std::size_t base = p.words.size();
  p.words.resize(base + words_for(n - 1, bits), 0u);
  for (int i = 1; i < n && bits > 0; ++i) {
    const std::uint64_t gap = ids[i] - ids[i - 1] - 1, at = std::uint64_t(i - 1) * bits;
    const std::size_t w = base + at / 32;
    const int shift = static_cast<int>(at % 32);
    p.words[w] |= static_cast<std::uint32_t>(gap << shift);
    if (shift + bits > 32) p.words[w + 1] |= static_cast<std::uint32_t>(gap >> (32 - shift));
  }
}

}  // namespace

int gap_bits(std::uint32_t gap) {
  int bits = 0;
  while (bits < 32 && (gap >> bits) != 0) ++bits;
  return bits;
}

std::size_t PackedLists::bytes() const {
  return words.size() * sizeof(std::uint32_t) + anchors.size() * sizeof(std::uint32_t) +
         block_word.size() * sizeof(std::uint64_t) + block_bits.size() + list_block.size() * sizeof(std::uint64_t) +
         list_anchor.size() * sizeof(std::uint64_t) + lengths.size() * sizeof(std::uint64_t);
}

std::uint64_t PackedLists::list_words(std::size_t list) const {
  const auto word_at = [&](std::uint64_t block) { return block < total_blocks() ? block_word[block] : words.size(); };
  return word_at(list_block[list + 1]) - word_at(list_block[list]);
}

PackedLists pack_lists(const PostingIndex& index) {
  PackedLists p;
  for (std::size_t l = 0; l < index.lists(); ++l) {
    const ListView v = index.list(l);
    for (std::size_t b = 0; b < v.size; b += kPackBlock)
      pack_block(v.ids + b, static_cast<int>(std::min<std::size_t>(kPackBlock, v.size - b)), p);
    p.list_block.push_back(p.total_blocks());
    p.list_anchor.push_back(p.anchors.size());
    p.lengths.push_back(v.size);
  }
  return p;
}

packed_decode::ListView list_view(const PackedLists& p, std::size_t list) {
  if (list >= p.lists()) throw Error("packed lists: no list " + std::to_string(list));
  const std::size_t b = p.list_block[list];
  return {p.words.data(), p.block_word.data() + b, p.block_bits.data() + b, p.anchors.data() + p.list_anchor[list],
          p.lengths[list]};
}

int unpack_block(const PackedLists& p, std::size_t list, std::size_t block, std::uint32_t* out) {
  if (list >= p.lists()) throw Error("packed lists: no list " + std::to_string(list));
  if (block >= p.blocks(list))
    throw Error("packed lists: list " + std::to_string(list) + " has no block " + std::to_string(block));
  const std::size_t at = p.list_block[list] + block;
  const int n = static_cast<int>(std::min<std::uint64_t>(kPackBlock, p.lengths[list] - block * kPackBlock));
  const int bits = p.block_bits[at];
  const std::uint32_t* w = p.words.data() + p.block_word[at];
  const std::uint64_t mask = bits == 32 ? 0xffffffffull : (1ull << bits) - 1;
  out[0] = p.first_id(list, block);
  for (int i = 1; i < n; ++i) {
    std::uint64_t gap = 0;
    if (bits > 0) {
      const std::uint64_t pos = std::uint64_t(i - 1) * bits;
      const int shift = static_cast<int>(pos % 32);
      std::uint64_t two = w[pos / 32];
      if (shift + bits > 32) two |= std::uint64_t(w[pos / 32 + 1]) << 32;
      gap = (two >> shift) & mask;
    }
    out[i] = out[i - 1] + static_cast<std::uint32_t>(gap) + 1;
  }
  return n;
}

std::vector<std::uint32_t> unpack_list(const PackedLists& p, std::size_t list) {
  if (list >= p.lists()) throw Error("packed lists: no list " + std::to_string(list));
  std::vector<std::uint32_t> out(p.lengths[list]);
  for (std::size_t b = 0; b < p.blocks(list); ++b) unpack_block(p, list, b, out.data() + b * kPackBlock);
  return out;
}

}  // namespace distancies::intersect
