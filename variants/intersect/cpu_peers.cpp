#include "variants/intersect/cpu_peers.hpp"

namespace distancies::intersect {

// Per instruction set (simd_gallop_portable.cpp, simd_gallop_avx2.cpp).
std::size_t gallop_pair_portable(const std::uint32_t* s, std::size_t n, const std::uint32_t* l, std::size_t m,
                                 std::uint32_t* out);
#ifdef DISTANCIES_HAVE_AVX2_GALLOP
std::size_t gallop_pair_avx2(const std::uint32_t* s, std::size_t n, const std::uint32_t* l, std::size_t m,
                             std::uint32_t* out);
#endif

Answers CpuPeer::run(const std::vector<Query>& queries) {
  Answers out(queries.size());
  pool_.run(queries.size(), [&](std::size_t i) { out[i] = one(queries[i]); });
  return out;
}

GallopIsa best_gallop_isa() {
#if defined(DISTANCIES_HAVE_AVX2_GALLOP) && (defined(__x86_64__) || defined(__i386__))
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return GallopIsa::Avx2;
#endif
  return GallopIsa::Portable;
}

const char* isa_name(GallopIsa isa) { return isa == GallopIsa::Avx2 ? "avx2" : "portable"; }

std::vector<std::uint32_t> simd_gallop_intersect(const Lists& lists, GallopIsa isa) {
  if (lists.empty()) return {};
  auto pair = gallop_pair_portable;
#ifdef DISTANCIES_HAVE_AVX2_GALLOP
  if (isa == GallopIsa::Avx2) pair = gallop_pair_avx2;
#else
  if (isa == GallopIsa::Avx2) throw Error("simd_gallop: this build has no AVX2 path");
#endif
  if (lists.size() == 1) return {lists[0].begin(), lists[0].end()};
  std::vector<std::uint32_t> acc(lists[0].size);
  std::size_t n = pair(lists[0].ids, lists[0].size, lists[1].ids, lists[1].size, acc.data());
  for (std::size_t s = 2; s < lists.size() && n > 0; ++s)
    n = pair(acc.data(), n, lists[s].ids, lists[s].size, acc.data());
  acc.resize(n);
  return acc;
}

namespace {

class SimdGallopPeer : public CpuPeer {
 public:
  SimdGallopPeer(const PostingIndex& index, unsigned threads)
      : CpuPeer(threads), index_(index), isa_(best_gallop_isa()) {}

 protected:
  std::vector<std::uint32_t> one(const Query& q) const override {
    return simd_gallop_intersect(lists_of(index_, q), isa_);
  }

 private:
  const PostingIndex& index_;
  GallopIsa isa_;
};

}  // namespace

std::unique_ptr<CpuPeer> make_simd_gallop_peer(const PostingIndex& index, unsigned threads) {
  return std::make_unique<SimdGallopPeer>(index, threads);
}

}  // namespace distancies::intersect
