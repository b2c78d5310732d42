// Merging the ordered top-k lists of disjoint row sets (GPU shards) on the device. Each list is
// ordered as kernels/common/ranking.hpp orders (similarity descending, row ascending) and padded
// at its end with row -1; rows are distinct across lists, so the order is total and every entry's
// place in the merged list is its index in its own list plus, for each other list, the number of
// its entries ranked before it (a binary search). No sort, no shared state: one thread an entry.
#pragma once
#include "kernels/common/host_device.hpp"
#include "kernels/common/ranking.hpp"

namespace distancies {

// One candidate as the shards exchange it; row -1 pads a list shorter than k.
struct ListHit {
  float sim;
  int row;
};

#if defined(__CUDACC__)
// lists: parts x queries x k (part-major); out: queries x k, filled with row -1 beforehand; each
// query's best k of its parts' lists, in order.
__global__ void merge_lists_kernel(const ListHit* lists, int parts, int queries, int k, ListHit* out);
#endif

}  // namespace distancies
