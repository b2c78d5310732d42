// The table of intersection variants: the study's nine (serial, coarse, fine for SVS, ADP and
// Hash(512)), the same kernels run as one batch, the batch's GPU designs beyond the study, and
// its CPU peers on every core.
#include <string>

#include "variants/intersect/intersect_registry.hpp"

namespace distancies {
namespace {

using intersect::HashTables;
using intersect::Lists;
using Ids = std::vector<std::uint32_t>;

Ids run_svs(const Lists& l, const Ids&, const HashTables&) { return intersect::svs_serial(l); }
Ids run_adp(const Lists& l, const Ids&, const HashTables&) { return intersect::adp_serial(l); }
Ids run_hash(const Lists& l, const Ids& t, const HashTables& h) { return intersect::hash_serial(l, t, h); }

std::unique_ptr<intersect::CpuPeer> peer_roaring(const intersect::PostingIndex& ix, unsigned threads) {
  return intersect::make_roaring_peer(ix, threads);
}
std::unique_ptr<intersect::CpuPeer> peer_simd_gallop(const intersect::PostingIndex& ix, unsigned threads) {
  return intersect::make_simd_gallop_peer(ix, threads);
}

using M = IntersectMethod;
using G = IntersectGrain;
using Serial = std::vector<std::uint32_t> (*)(const Lists&, const Ids&, const HashTables&);
using Mark = void (*)(const IntersectArgs&, int, cudaStream_t);
using Peer = std::unique_ptr<intersect::CpuPeer> (*)(const intersect::PostingIndex&, unsigned);

// The rows by kind, so that a row names only what its kind uses.
enum class Launch { PerQuery, WholeBatch };
IntersectVariant serial(const char* name, const char* description, M method, Serial run) {
  return {name, description, "study", method, G::Serial, false, nullptr, run};
}
IntersectVariant gpu(const char* name, const char* description, const char* origin, M method, G grain, Launch launch,
                     Mark mark) {
  return {name, description, origin, method, grain, launch == Launch::WholeBatch, mark, nullptr};
}
IntersectVariant compacting(IntersectVariant v) {  // its kernel compacts the answers itself
  v.compacts = true;
  return v;
}
IntersectVariant cpu_peer(const char* name, const char* description, M method, Peer peer) {
  IntersectVariant v{name, description, "CPU peer", method, G::AllCores, false, nullptr, nullptr};
  v.peer = peer;
  return v;
}

}  // namespace

const registry::Table<IntersectVariant>& intersect_variants() {
  static const registry::Table<IntersectVariant> t(
      "intersect", "intersect", "intersection variant",
      {
          serial("svs_serial", "SVS on the CPU: the two shortest lists zipped, then the survivors with each next list",
                 M::Svs, run_svs),
          serial("adp_serial",
                 "ADP on the CPU: each id of the shortest list looked for in every list, a cursor per list", M::Adp,
                 run_adp),
          serial("hash_serial", "Hash(512) on the CPU: the id's bucket in each list, a binary search inside it",
                 M::Hash, run_hash),
          gpu("svs_coarse",
              "SVS, a thread per 8 ids of the shortest list, start by binary search, zipper per list; a launch per "
              "query",
              "study", M::Svs, G::Coarse, Launch::PerQuery, launch_coarse_mark<M::Svs>),
          gpu("adp_coarse", "ADP, a thread per 8 ids of the shortest list, a cursor per list; a launch per query",
              "study", M::Adp, G::Coarse, Launch::PerQuery, launch_coarse_mark<M::Adp>),
          gpu("hash_coarse",
              "Hash(512), a thread per 8 ids of the shortest list, bucket then binary search; a launch per query",
              "study", M::Hash, G::Coarse, Launch::PerQuery, launch_coarse_mark<M::Hash>),
          gpu("svs_fine",
              "SVS, a warp compares one id with 32 ids of a list per step, list by list; a launch per query", "study",
              M::Svs, G::Fine, Launch::PerQuery, launch_fine_mark<M::Svs>),
          gpu("adp_fine", "ADP, a warp compares one id with 32 ids of each list per step; a launch per query", "study",
              M::Adp, G::Fine, Launch::PerQuery, launch_fine_mark<M::Adp>),
          gpu("hash_fine", "Hash(512), a warp scans the id's bucket 32 ids a step; a launch per query", "study",
              M::Hash, G::Fine, Launch::PerQuery, launch_fine_mark<M::Hash>),
          gpu("svs_coarse_batch",
              "svs_coarse with every query of the batch in one launch, work split by the shortest lists",
              "beyond the study", M::Svs, G::Coarse, Launch::WholeBatch, launch_coarse_mark<M::Svs>),
          gpu("adp_coarse_batch", "adp_coarse with every query of the batch in one launch", "beyond the study", M::Adp,
              G::Coarse, Launch::WholeBatch, launch_coarse_mark<M::Adp>),
          gpu("hash_coarse_batch", "hash_coarse with every query of the batch in one launch", "beyond the study",
              M::Hash, G::Coarse, Launch::WholeBatch, launch_coarse_mark<M::Hash>),
          gpu("svs_fine_batch", "svs_fine with every query of the batch in one launch", "beyond the study", M::Svs,
              G::Fine, Launch::WholeBatch, launch_fine_mark<M::Svs>),
          gpu("adp_fine_batch", "adp_fine with every query of the batch in one launch", "beyond the study", M::Adp,
              G::Fine, Launch::WholeBatch, launch_fine_mark<M::Adp>),
          gpu("hash_fine_batch", "hash_fine with every query of the batch in one launch", "beyond the study", M::Hash,
              G::Fine, Launch::WholeBatch, launch_fine_mark<M::Hash>),
          gpu("gallop_coarse_batch",
              "a thread per 8 ids, galloping (exponential) search from its cursor in each list; one launch",
              "beyond the study", M::Gallop, G::Coarse, Launch::WholeBatch, launch_coarse_mark<M::Gallop>),
          gpu("bitmap_coarse_batch", "long lists as bitmaps (one bit test an id), galloping in the others; one launch",
              "beyond the study", M::Bitmap, G::Coarse, Launch::WholeBatch, launch_coarse_mark<M::Bitmap>),
          gpu("mergepath_coarse_batch",
              "merge-path partitioning: each thread 8 steps of the merge of the two shortest lists (equal work), "
              "galloping in the others; one launch",
              "beyond the study", M::MergePath, G::Coarse, Launch::WholeBatch, launch_merge_path_mark),
          gpu("staged_coarse_batch",
              "a block reads each list's window for its 1,024 ids into shared memory (coalesced) and its threads "
              "binary-search there; long windows galloped, bitmapped lists one bit test; one launch",
              "beyond the study", M::Staged, G::Coarse, Launch::WholeBatch, launch_staged_mark),
          compacting(gpu(
              "probe_coarse_batch",
              "4 ids a thread placed a block apart (short dependent chains, many threads): a bit test in bitmapped "
              "lists, "
              "else the Hash(512) bucket's binary search; answers compacted in the block, no select pass; one launch",
              "beyond the study", M::Probe, G::Coarse, Launch::WholeBatch, launch_probe_mark)),
          compacting(gpu("packed_coarse_batch",
                         "probe_coarse_batch over packed lists (blocks of 128 bit-packed gaps, every 8th id kept "
                         "whole): each tile decoded by warps into shared memory, each id then a bit test in "
                         "bitmapped lists, else a search of the list's whole ids (a guess, galloping, a binary "
                         "search) and at most 7 gaps summed; one launch",
                         "beyond the study", M::Packed, G::Coarse, Launch::WholeBatch, launch_packed_probe_mark)),
          cpu_peer("roaring_allcores",
                   "CRoaring on every core: each list a roaring bitmap (built once, untimed), a query's bitmaps and-ed "
                   "shortest first; a query per thread",
                   M::Roaring, peer_roaring),
          cpu_peer(
              "simd_gallop_allcores",
              "sorted arrays on every core, shortest list first: an 8-by-8 block merge for lists within 8x of each "
              "other, else SIMD galloping (AVX2 compares where the CPU has it); a query per thread",
              M::SimdGallop, peer_simd_gallop),
      });
  return t;
}

const IntersectVariant& intersect_variant(const std::string& name) { return intersect_variants().at(name); }

const char* method_name(IntersectMethod m) {
  switch (m) {
    case M::Svs:
      return "svs";
    case M::Adp:
      return "adp";
    case M::Hash:
      return "hash";
    case M::Gallop:
      return "gallop";
    case M::Bitmap:
      return "bitmap";
    case M::MergePath:
      return "mergepath";
    case M::Staged:
      return "staged";
    case M::Probe:
      return "probe";
    case M::Packed:
      return "packed";
    case M::Roaring:
      return "roaring";
    case M::SimdGallop:
      return "simd_gallop";
  }
  return "?";
}

const char* grain_name(IntersectGrain g) {
  switch (g) {
    case G::Serial:
      return "serial";
    case G::Coarse:
      return "coarse";
    case G::Fine:
      return "fine";
    case G::AllCores:
      return "allcores";
  }
  return "?";
}

std::string grain_label(const IntersectVariant& v) {
  return std::string(grain_name(v.grain)) + (v.batched ? "_batch" : "");
}

std::vector<std::string> intersect_variant_problems(const IntersectVariant& v) {
  std::vector<std::string> out;
  const std::string me = std::string("intersection variant '") + v.name + "'";
  if (v.grain == G::Serial && (!v.serial || v.mark))
    out.push_back(me + " is serial but has no CPU function (or has a kernel)");
  const bool gpu = v.grain == G::Coarse || v.grain == G::Fine;
  if (gpu && (!v.mark || v.serial || v.peer))
    out.push_back(me + " runs on the GPU but has no kernel (or has a CPU function)");
  if (!gpu && v.batched) out.push_back(me + " runs on the CPU and is marked batched (a GPU launch)");
  if (v.grain != G::AllCores && v.peer) out.push_back(me + " has a CPU peer but is not an allcores row");
  const bool peer_method = v.method == M::Roaring || v.method == M::SimdGallop;
  if (v.grain == G::AllCores && (!v.peer || v.serial || v.mark || !peer_method))
    out.push_back(me + " is an allcores row: it needs a peer (roaring or simd_gallop) and nothing else");
  if (peer_method && v.grain != G::AllCores) out.push_back(me + ": roaring and simd_gallop run only on every core");
  if (v.method == M::MergePath && v.grain == G::Serial) out.push_back(me + ": no serial merge-path row");
  if (v.grain == G::Fine && (v.method == M::Gallop || v.method == M::Bitmap || v.method == M::MergePath ||
                             v.method == M::Staged || v.method == M::Probe || v.method == M::Packed))
    out.push_back(me + ": no fine-grained kernel for " + method_name(v.method));
  if (v.compacts && (!v.batched || v.method == M::MergePath))
    out.push_back(me + " compacts its answers but is not a batch over the shortest lists (the others select)");
  const std::string expect = std::string(method_name(v.method)) + "_" + grain_label(v);
  if (expect != v.name) out.push_back(me + " should be named '" + expect + "' (<algorithm>_<grain>)");
  return out;
}

}  // namespace distancies
