#include "variants/intersect/packed_device.hpp"

#include <algorithm>
#include <string>

#include "kernels/intersect/packed_decode.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/error.hpp"

namespace distancies::intersect {
namespace {

constexpr int kWarps = 8;

// A device copy of a host array (at least 16 bytes, so an empty array has an address too).
template <class T>
DeviceBuffer to_device(const std::vector<T>& v, const char* what) {
  DeviceBuffer b(std::max<std::size_t>(v.size() * sizeof(T), 16), what);
  if (!v.empty()) CUDA_CHECK(cudaMemcpy(b.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return b;
}

}  // namespace

std::vector<std::vector<std::uint32_t>> decode_lists_on_device(const PackedLists& p,
                                                               const std::vector<std::size_t>& lists) {
  std::vector<std::uint64_t> jobs, first_at, out_at;
  std::vector<int> n_ids;
  std::size_t total = 0;
  for (std::size_t l : lists) {
    if (l >= p.lists()) throw Error("packed lists: no list " + std::to_string(l));
    for (std::size_t b = 0; b < p.blocks(l); ++b) {
      jobs.push_back(p.list_block[l] + b);
      first_at.push_back(p.list_anchor[l] + b * kAnchorsPerBlock);
      out_at.push_back(total + b * kPackBlock);
      n_ids.push_back(static_cast<int>(std::min<std::uint64_t>(kPackBlock, p.lengths[l] - b * kPackBlock)));
    }
    total += p.lengths[l];
  }
  if (jobs.empty()) return std::vector<std::vector<std::uint32_t>>(lists.size());
  const DeviceBuffer words = to_device(p.words, "the packed gaps"), anchors = to_device(p.anchors, "the anchors"),
                     word_at = to_device(p.block_word, "the blocks' word offsets"),
                     bits = to_device(p.block_bits, "the blocks' widths"), job = to_device(jobs, "the decode jobs"),
                     first = to_device(first_at, "the jobs' first anchors"),
                     at = to_device(out_at, "the decoded ids' places"), n = to_device(n_ids, "the blocks' id counts");
  DeviceBuffer ids(std::max<std::size_t>(total * sizeof(std::uint32_t), 16), "the decoded ids");
  const PackedDecodeArgs a{words.as<std::uint32_t>(),
                           anchors.as<std::uint32_t>(),
                           first.as<std::uint64_t>(),
                           word_at.as<std::uint64_t>(),
                           bits.as<std::uint8_t>(),
                           job.as<std::uint64_t>(),
                           at.as<std::uint64_t>(),
                           n.as<int>(),
                           static_cast<long long>(jobs.size()),
                           ids.as<std::uint32_t>()};
  const auto grid = static_cast<unsigned>((jobs.size() + kWarps - 1) / kWarps);
  decode_blocks_kernel<kWarps><<<grid, kWarps * 32>>>(a);
  CUDA_CHECK_LAUNCH();
  std::vector<std::uint32_t> flat(total);
  CUDA_CHECK(cudaMemcpy(flat.data(), ids.get(), total * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  std::vector<std::vector<std::uint32_t>> out;
  std::size_t from = 0;
  for (std::size_t l : lists) {
    out.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(from),
                     flat.begin() + static_cast<std::ptrdiff_t>(from + p.lengths[l]));
    from += p.lengths[l];
  }
  return out;
}

}  // namespace distancies::intersect
