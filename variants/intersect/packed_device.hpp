// Packed posting lists decoded on the GPU (kernels/intersect/packed_decode.cuh): a warp a block
// of 128 ids. The building block of intersections that read compressed lists; the intersection
// rows do not call it yet (docs/intersection.md, "Compressed lists").
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "variants/intersect/packed_lists.hpp"

namespace distancies::intersect {

// The ids of each of `lists` (indices into p), decoded on the device from p's arrays copied there.
std::vector<std::vector<std::uint32_t>> decode_lists_on_device(const PackedLists& p,
                                                               const std::vector<std::size_t>& lists);

}  // namespace distancies::intersect
