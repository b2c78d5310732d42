// The CRoaring peer (cpu_peers.hpp). Debian's libroaring-dev; without it (DISTANCIES_HAVE_ROARING
// unset) the peer says it was not built.
#include "variants/intersect/cpu_peers.hpp"

#ifdef DISTANCIES_HAVE_ROARING
#include <roaring/roaring.h>
#endif

namespace distancies::intersect {

#ifdef DISTANCIES_HAVE_ROARING
namespace {

struct FreeBitmap {
  void operator()(roaring_bitmap_t* b) const { roaring_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<roaring_bitmap_t, FreeBitmap>;

class RoaringPeer : public CpuPeer {
 public:
  // Every list as a bitmap, compressed as Roaring chooses (arrays, bitsets, runs): the index.
  RoaringPeer(const PostingIndex& index, unsigned threads) : CpuPeer(threads), index_(index) {
    bitmaps_.reserve(index.lists());
    for (std::size_t l = 0; l < index.lists(); ++l) {
      const ListView v = index.list(l);
      Bitmap b(roaring_bitmap_of_ptr(v.size, v.ids));
      if (!b) throw Error("roaring: out of memory building the bitmap of list " + std::to_string(l));
      roaring_bitmap_run_optimize(b.get());
      roaring_bitmap_shrink_to_fit(b.get());
      bitmaps_.push_back(std::move(b));
    }
  }

 protected:
  std::vector<std::uint32_t> one(const Query& q) const override {
    const std::vector<std::uint32_t> t = terms_by_length(index_, q);
    if (t.empty()) return {};
    std::vector<std::uint32_t> out;
    if (t.size() == 1) {
      out.resize(roaring_bitmap_get_cardinality(bitmaps_[t[0]].get()));
      roaring_bitmap_to_uint32_array(bitmaps_[t[0]].get(), out.data());
      return out;
    }
    Bitmap acc(roaring_bitmap_and(bitmaps_[t[0]].get(), bitmaps_[t[1]].get()));
    if (!acc) throw Error("roaring: out of memory intersecting a query");
    for (std::size_t s = 2; s < t.size() && !roaring_bitmap_is_empty(acc.get()); ++s)
      roaring_bitmap_and_inplace(acc.get(), bitmaps_[t[s]].get());
    out.resize(roaring_bitmap_get_cardinality(acc.get()));
    roaring_bitmap_to_uint32_array(acc.get(), out.data());
    return out;
  }

 private:
  const PostingIndex& index_;
  std::vector<Bitmap> bitmaps_;  // list i's bitmap
};

}  // namespace

bool roaring_built() { return true; }

std::unique_ptr<CpuPeer> make_roaring_peer(const PostingIndex& index, unsigned threads) {
  return std::make_unique<RoaringPeer>(index, threads);
}
#else
bool roaring_built() { return false; }

std::unique_ptr<CpuPeer> make_roaring_peer(const PostingIndex&, unsigned) {
  throw PeerNotBuilt(
      "roaring_allcores was not built: CRoaring (Debian's libroaring-dev) was not found when CMake configured");
}
#endif

}  // namespace distancies::intersect
