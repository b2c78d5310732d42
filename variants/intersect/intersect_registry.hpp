// The posting-list study's registry: every way to intersect a query's lists, a row of one
// table. Serial rows run on the CPU; GPU rows launch a marking kernel over tiles (a tile is up
// to kIntersectTile ids of one query's shortest list). `batched` rows run a whole batch of
// queries in one launch; the others launch per query and copy each count back, as the study
// did. AllCores rows are the batch's CPU peers (cpu_peers.hpp): every query of the batch over
// every core. Tests, fixtures, `distancies intersect` and `distancies list` iterate this table.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/intersect/intersect_args.cuh"
#include "variants/intersect/cpu_intersect.hpp"
#include "variants/intersect/cpu_peers.hpp"
#include "variants/registry_model.hpp"

namespace distancies {

enum class IntersectGrain { Serial, Coarse, Fine, AllCores };

struct IntersectVariant {
  const char* name;  // <algorithm>_<grain>[_batch]
  const char* description;
  const char* origin;  // "study" or "beyond the study"
  IntersectMethod method;
  IntersectGrain grain;
  bool batched;  // GPU: all queries in one launch (else a launch, a select and a copy per query)
  // GPU rows: the marking kernel over `ntiles` tiles starting at args.tiles.
  void (*mark)(const IntersectArgs& args, int ntiles, cudaStream_t stream);
  // Serial rows: the query's lists shortest first and their term ids.
  std::vector<std::uint32_t> (*serial)(const intersect::Lists& lists, const std::vector<std::uint32_t>& terms,
                                       const intersect::HashTables& hash);
  // The kernel compacts each tile's answers itself (at the tile's first candidate position,
  // tile_counts of them): no flags and no select pass.
  bool compacts = false;
  // AllCores rows: the peer, prepared from the index (untimed); threads 0: every hardware
  // thread. Throws intersect::PeerNotBuilt where this build lacks its library.
  std::unique_ptr<intersect::CpuPeer> (*peer)(const intersect::PostingIndex& index, unsigned threads) = nullptr;
};

const registry::Table<IntersectVariant>& intersect_variants();
const IntersectVariant& intersect_variant(const std::string& name);  // unknown: one error line

// svs, adp, hash, gallop, bitmap, mergepath, staged, probe, packed, roaring, simd_gallop
const char* method_name(IntersectMethod m);
const char* grain_name(IntersectGrain g);  // serial, coarse, fine, allcores
// The fixture's <grain> part: serial, coarse, fine, coarse_batch, fine_batch, allcores.
std::string grain_label(const IntersectVariant& v);
// Problems with a row (empty: none): launch, serial function or peer as its grain needs, its name.
std::vector<std::string> intersect_variant_problems(const IntersectVariant& v);

// Marking launchers (intersect_mark.cu).
template <IntersectMethod M>
void launch_coarse_mark(const IntersectArgs& a, int ntiles, cudaStream_t s);
template <IntersectMethod M>
void launch_fine_mark(const IntersectArgs& a, int ntiles, cudaStream_t s);
void launch_merge_path_mark(const IntersectArgs& a, int ntiles, cudaStream_t s);
void launch_staged_mark(const IntersectArgs& a, int ntiles, cudaStream_t s);
void launch_probe_mark(const IntersectArgs& a, int ntiles, cudaStream_t s);
void launch_packed_probe_mark(const IntersectArgs& a, int ntiles, cudaStream_t s);

}  // namespace distancies
