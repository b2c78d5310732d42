// The GPU batch's CPU peers: the best CPU practice, on every core. Each peer is prepared once
// from the index (untimed, as an index is built), then answers a batch of queries with each
// query whole on one thread of a QueryPool; answers as every row's: the common ids, increasing.
//   simd_gallop  sorted arrays, shortest first: an 8-by-8 block merge for lists of similar
//                lengths, SIMD galloping past 8x (simd_gallop_kernel.hpp); AVX2 where the CPU
//                has it, else the portable compares
//   roaring      CRoaring (Debian's libroaring-dev): each list a roaring bitmap, a query's
//                bitmaps and-ed shortest first; not built without the library
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/error.hpp"
#include "variants/intersect/cpu_intersect.hpp"
#include "variants/intersect/query_pool.hpp"

namespace distancies::intersect {

using Answers = std::vector<std::vector<std::uint32_t>>;

class CpuPeer {
 public:
  explicit CpuPeer(unsigned threads) : pool_(threads) {}
  virtual ~CpuPeer() = default;
  unsigned threads() const { return pool_.threads(); }
  // Every query of the batch (terms must name lists of the index the peer was made from).
  Answers run(const std::vector<Query>& queries);
  // One query on the calling thread (the one-query latency's peer).
  std::vector<std::uint32_t> answer(const Query& q) const { return one(q); }

 protected:
  virtual std::vector<std::uint32_t> one(const Query& q) const = 0;  // on any pool thread

 private:
  QueryPool pool_;
};

// A peer this build lacks (its library was not found when CMake configured): the reason.
struct PeerNotBuilt : Error {
  using Error::Error;
};

// threads: 0 means every hardware thread.
std::unique_ptr<CpuPeer> make_simd_gallop_peer(const PostingIndex& index, unsigned threads = 0);
std::unique_ptr<CpuPeer> make_roaring_peer(const PostingIndex& index, unsigned threads = 0);  // or PeerNotBuilt
bool roaring_built();

// One query's lists (shortest first) by SIMD galloping, on the calling thread.
enum class GallopIsa { Portable, Avx2 };
GallopIsa best_gallop_isa();          // Avx2 where this build has it and the CPU runs it
const char* isa_name(GallopIsa isa);  // "portable", "avx2"
std::vector<std::uint32_t> simd_gallop_intersect(const Lists& lists, GallopIsa isa = best_gallop_isa());

}  // namespace distancies::intersect
