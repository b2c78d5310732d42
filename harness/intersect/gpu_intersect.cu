#include "harness/intersect/gpu_intersect.hpp"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/cuda_check.hpp"
#include "runtime/error.hpp"
#include "variants/intersect/cpu_intersect.hpp"

namespace distancies::intersect {

const char* memory_name(IndexMemory m) { return m == IndexMemory::Managed ? "managed" : "explicit"; }

GpuAllocation::GpuAllocation(std::size_t bytes, IndexMemory kind, const char* what) : kind_(kind) {
  bytes = std::max<std::size_t>(bytes, 4);
  bytes_ = bytes;
  // An owning allocation of either kind (freed in the destructor); out of memory is the one
  // OutOfMemory error every allocation raises.
  const cudaError_t e = kind == IndexMemory::Managed ? cudaMallocManaged(&ptr_, bytes) : cudaMalloc(&ptr_, bytes);
  if (e == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    ptr_ = nullptr;
    throw_out_of_memory(MemoryKind::Device, std::string(what) + " (" + memory_name(kind) + " memory)", bytes);
  }
  CUDA_CHECK(e);
}

GpuAllocation::~GpuAllocation() {
  if (ptr_) cudaFree(ptr_);
}

GpuAllocation::GpuAllocation(GpuAllocation&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), kind_(o.kind_) {}

GpuAllocation& GpuAllocation::operator=(GpuAllocation&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    kind_ = o.kind_;
  }
  return *this;
}

void GpuAllocation::upload(const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  if (kind_ == IndexMemory::Managed) {
    CUDA_CHECK(cudaDeviceSynchronize());  // no kernel may be using the pages the host writes
    std::memcpy(ptr_, src, bytes);
  } else {
    CUDA_CHECK(cudaMemcpy(ptr_, src, bytes, cudaMemcpyHostToDevice));
  }
}

struct GpuIndex::Packed {
  PackedLists host;
  GpuAllocation words, block_word, block_bits, anchors, list_block, list_anchor, lengths;
};

GpuIndex::~GpuIndex() = default;

GpuIndex::GpuIndex(const PostingIndex& index, IndexMemory memory, std::size_t bitmap_budget)
    : index_(index), memory_(memory) {
  require_device();
  ids_ = GpuAllocation(index.ids.size() * 4, memory, "the index ids");
  ids_.upload(index.ids.data(), index.ids.size() * 4);
  offsets_ = GpuAllocation(index.offsets.size() * 8, memory, "the index offsets");
  offsets_.upload(index.offsets.data(), index.offsets.size() * 8);
  const HashTables h = build_hash_tables(index);
  hash_ = GpuAllocation(h.starts.size() * 4, memory, "the Hash(512) tables");
  hash_.upload(h.starts.data(), h.starts.size() * 4);
  // Bitmaps for the long lists: a bitmap costs (max_id + 1) / 8 bytes, 8 times a list of
  // (max_id + 1) / 256 ids; shorter lists stay lists.
  bitmap_words_ = static_cast<unsigned long long>(index.max_id) / 32 + 1;
  const std::uint64_t min_len = std::max<std::uint64_t>(64, (std::uint64_t(index.max_id) + 1) / 256);
  std::vector<long long> slot(index.lists(), -1);
  for (std::size_t l = 0; l < index.lists(); ++l)
    if (index.length(l) >= min_len && (bitmapped_ + 1) * bitmap_words_ * 4 <= bitmap_budget)
      slot[l] = static_cast<long long>(bitmapped_++);
  slots_ = GpuAllocation(slot.size() * 8, memory, "the bitmap slots");
  slots_.upload(slot.data(), slot.size() * 8);
  std::vector<unsigned> bits(bitmapped_ * bitmap_words_, 0u);
  for (std::size_t l = 0; l < index.lists(); ++l)
    if (slot[l] >= 0)
      for (std::uint32_t id : index.list(l)) bits[slot[l] * bitmap_words_ + id / 32] |= 1u << (id % 32);
  bitmaps_ = GpuAllocation(bits.size() * 4, memory, "the bitmaps");
  bitmaps_.upload(bits.data(), bits.size() * 4);
}

IntersectArgs GpuIndex::args() const {
  IntersectArgs a{};
  a.ids = ids_.as<unsigned>();
  a.offsets = offsets_.as<unsigned long long>();
  a.hash_starts = hash_.as<unsigned>();
  a.max_id = index_.max_id;
  a.bitmap_slot = slots_.as<long long>();
  a.bitmaps = bitmaps_.as<unsigned>();
  a.bitmap_words = bitmap_words_;
  return a;
}

const GpuIndex::Packed& GpuIndex::packed() const {
  if (!packed_) {
    auto p = std::make_unique<Packed>();
    p->host = pack_lists(index_);
    auto upload = [&](GpuAllocation& to, const auto& v, const char* what) {
      to = GpuAllocation(v.size() * sizeof(v[0]), memory_, what);
      to.upload(v.data(), v.size() * sizeof(v[0]));
    };
    upload(p->words, p->host.words, "the packed gaps");
    upload(p->block_word, p->host.block_word, "the packed blocks' word offsets");
    upload(p->block_bits, p->host.block_bits, "the packed blocks' widths");
    upload(p->anchors, p->host.anchors, "the packed lists' anchors");
    upload(p->list_block, p->host.list_block, "the packed lists' first blocks");
    upload(p->list_anchor, p->host.list_anchor, "the packed lists' first anchors");
    upload(p->lengths, p->host.lengths, "the packed lists' lengths");
    packed_ = std::move(p);
  }
  return *packed_;
}

const PackedLists& GpuIndex::packed_host() const { return packed().host; }

PackedIndexArgs GpuIndex::packed_args() const {
  const Packed& p = packed();
  return {p.words.as<std::uint32_t>(),   p.block_word.as<std::uint64_t>(), p.block_bits.as<std::uint8_t>(),
          p.anchors.as<std::uint32_t>(), p.list_block.as<std::uint64_t>(), p.list_anchor.as<std::uint64_t>(),
          p.lengths.as<std::uint64_t>()};
}

std::uint64_t GpuIndex::list_bytes(bool packed) const {
  return packed ? packed_host().bytes() : index_.ids.size() * 4 + index_.offsets.size() * 8;
}

std::uint64_t GpuIndex::aux_bytes(bool packed) const {
  const std::uint64_t bitmaps = bitmapped_ * bitmap_words_ * 4 + index_.lists() * 8;
  return bitmaps + (packed ? 0 : std::uint64_t(index_.lists()) * (kIntersectBuckets + 1) * 4);
}

GpuBatch::GpuBatch(const GpuIndex& index, const std::vector<Query>& queries) : index_(index) { assign(queries); }

GpuBatch::~GpuBatch() {
  if (staged_) {
    cudaEventSynchronize(staged_);  // the staging buffer is freed next: its copies must be done
    cudaEventDestroy(staged_);
  }
}

namespace {
// Query qi's `len` positions cut into tiles of at most kIntersectTile, appended to `tiles`.
void append_tiles(std::vector<IntersectTile>& tiles, std::size_t qi, unsigned len) {
  for (unsigned b = 0; b < len; b += kIntersectTile)
    tiles.push_back({static_cast<int>(qi), b, std::min<unsigned>(len, b + kIntersectTile)});
}

// `a` holding at least `bytes`: kept where it does, else made again (the batch after a larger one
// re-uses the buffers; only growth allocates).
void fit(GpuAllocation& a, std::size_t bytes, const char* what) {
  if (a.bytes() >= std::max<std::size_t>(bytes, 4)) return;
  a = GpuAllocation();
  a = GpuAllocation(bytes, IndexMemory::Explicit, what);
}
}  // namespace

void GpuBatch::assign(const std::vector<Query>& queries) {
  const PostingIndex& ix = index_.host();
  std::vector<IntersectTile> tiles;
  host_queries_.clear();
  merge_lengths_.clear();
  shortest_.begin.assign(1, 0);
  merged_ready_ = solo_ready_ = false;
  touched_bytes_ = 0;
  shortest_ids_ = 0;
  for (std::size_t qi = 0; qi < queries.size(); ++qi) {
    const std::vector<std::uint32_t> t = terms_by_length(ix, queries[qi]);
    if (t.empty() || t.size() > static_cast<std::size_t>(kIntersectMaxTerms))
      throw Error("query " + std::to_string(qi + 1) + " has " + std::to_string(t.size()) + " terms (1.." +
                  std::to_string(kIntersectMaxTerms) + ")");
    DeviceQuery d{};
    for (std::size_t s = 0; s < t.size(); ++s) d.terms[s] = t[s];
    d.nterms = static_cast<int>(t.size());
    d.cand_base = shortest_ids_;
    const unsigned n = static_cast<unsigned>(ix.length(t[0]));
    append_tiles(tiles, qi, n);
    shortest_.begin.push_back(static_cast<int>(tiles.size()));
    // A merge with an empty list has no id to find: no tiles, as for an empty shortest list.
    merge_lengths_.push_back(n == 0 ? 0u : n + (t.size() > 1 ? static_cast<unsigned>(ix.length(t[1])) : 0u));
    shortest_ids_ += n;
    host_queries_.push_back(d);
    for (std::uint32_t term : queries[qi].terms) touched_bytes_ += 4 * ix.length(term);
  }
  stage_upload(tiles);
  fit(cand_, shortest_ids_ * 4, "the candidates");
  fit(flags_, shortest_ids_, "the flags");
  fit(out_, shortest_ids_ * 4, "the answers");
  fit(num_, (host_queries_.size() + 1) * 8, "the answer counts");
  CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, temp_bytes_, cand_.as<unsigned>(), flags_.as<unsigned char>(),
                                        out_.as<unsigned>(), num_.as<unsigned long long>(),
                                        static_cast<long long>(std::max<std::uint64_t>(shortest_ids_, 1))));
  fit(temp_, temp_bytes_, "the select scratch");
  temp_bytes_ = temp_.bytes();
}

// The queries and the shortest lists' tiles in one page-locked buffer, copied asynchronously: a
// run waits for the copies on the device (staged_), and the next assign for them on the host
// before it writes the buffer again. Pageable copies, one synchronous copy an array, took most of
// a batch's set-up.
void GpuBatch::stage_upload(const std::vector<IntersectTile>& tiles) {
  const std::size_t qbytes = host_queries_.size() * sizeof(DeviceQuery);
  const std::size_t tbytes = tiles.size() * sizeof(IntersectTile);
  const std::size_t tat = (qbytes + 15) / 16 * 16;
  if (!staged_) CUDA_CHECK(cudaEventCreateWithFlags(&staged_, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventSynchronize(staged_));  // the last batch's copies have left the buffer
  if (staging_.bytes() < tat + tbytes) {
    staging_ = PinnedBuffer();
    staging_ = PinnedBuffer(tat + tbytes, "the batch's staging");
  }
  char* host = staging_.as<char>();
  if (qbytes) std::memcpy(host, host_queries_.data(), qbytes);
  if (tbytes) std::memcpy(host + tat, tiles.data(), tbytes);
  fit(queries_, qbytes, "the queries");
  fit(shortest_.tiles, tbytes, "the tiles");
  fit(shortest_.counts, tiles.size() * 4, "the tile counts");
  if (qbytes) CUDA_CHECK(cudaMemcpyAsync(queries_.as<void>(), host, qbytes, cudaMemcpyHostToDevice, nullptr));
  if (tbytes)
    CUDA_CHECK(cudaMemcpyAsync(shortest_.tiles.as<void>(), host + tat, tbytes, cudaMemcpyHostToDevice, nullptr));
  CUDA_CHECK(cudaEventRecord(staged_, nullptr));
}

// The merge-path rows' tiles (ranges of the merge of each query's two shortest lists), made on
// their first run after an assign: the other rows never read them.
void GpuBatch::ensure_merged() {
  if (merged_ready_) return;
  std::vector<IntersectTile> merged;
  merged_.begin.assign(1, 0);
  for (std::size_t qi = 0; qi < merge_lengths_.size(); ++qi) {
    append_tiles(merged, qi, merge_lengths_[qi]);
    merged_.begin.push_back(static_cast<int>(merged.size()));
  }
  fit(merged_.tiles, merged.size() * sizeof(IntersectTile), "the merge tiles");
  merged_.tiles.upload(merged.data(), merged.size() * sizeof(IntersectTile));
  fit(merged_.counts, merged.size() * 4, "the merge tile counts");
  merged_ready_ = true;
}

// run_one's queries: each at candidate position 0, made on its first call after an assign.
void GpuBatch::ensure_solo() {
  if (solo_ready_) return;
  std::vector<DeviceQuery> solo = host_queries_;
  for (DeviceQuery& d : solo) d.cand_base = 0;
  fit(solo_queries_, solo.size() * sizeof(DeviceQuery), "the queries, one at a time");
  solo_queries_.upload(solo.data(), solo.size() * sizeof(DeviceQuery));
  solo_ready_ = true;
}

IntersectArgs GpuBatch::args_for(const IntersectVariant& v) const {
  IntersectArgs a = index_.args();
  a.queries = queries_.as<DeviceQuery>();
  a.cand = cand_.as<unsigned>();
  a.flags = flags_.as<unsigned char>();
  if (v.method == IntersectMethod::Packed) a.packed = index_.packed_args();
  return a;
}

std::uint64_t GpuBatch::shortest_length(std::size_t q) const {
  return (q + 1 < host_queries_.size() ? host_queries_[q + 1].cand_base : shortest_ids_) - host_queries_[q].cand_base;
}

void GpuBatch::run(const IntersectVariant& v, cudaStream_t stream) {
  if (!v.mark) throw Error(std::string("'") + v.name + "' is not a GPU variant");
  IntersectArgs a = args_for(v);
  last_batched_ = v.batched;
  last_compacts_ = v.compacts;
  if (v.method == IntersectMethod::MergePath) ensure_merged();
  CUDA_CHECK(cudaStreamWaitEvent(stream, staged_, 0));  // the batch's copies (stage_upload)
  const Tiling& tl = v.method == IntersectMethod::MergePath ? merged_ : shortest_;
  last_tiling_ = &tl;
  auto select = [&](std::uint64_t base, std::uint64_t n, unsigned long long* num) {
    std::size_t bytes = temp_bytes_;
    CUDA_CHECK(cub::DeviceSelect::Flagged(temp_.as<void>(), bytes, cand_.as<unsigned>() + base,
                                          flags_.as<unsigned char>() + base, out_.as<unsigned>() + base, num,
                                          static_cast<long long>(n), stream));
  };
  if (v.batched) {
    if (tl.begin.back() == 0) return;  // no tiles (no queries, or only empty shortest lists): nothing to mark
    a.tiles = tl.tiles.as<IntersectTile>();
    a.tile_counts = tl.counts.as<unsigned>();
    v.mark(a, tl.begin.back(), stream);
    if (shortest_ids_ && !v.compacts) select(0, shortest_ids_, num_.as<unsigned long long>());
    return;
  }
  // The study's habit: per query, a launch, a select and the count copied back.
  unsigned long long count = 0;
  for (std::size_t q = 0; q < host_queries_.size(); ++q) {
    const int t0 = tl.begin[q], nt = tl.begin[q + 1] - t0;
    if (nt == 0) continue;
    a.tiles = tl.tiles.as<IntersectTile>() + t0;
    a.tile_counts = tl.counts.as<unsigned>() + t0;
    v.mark(a, nt, stream);
    const std::uint64_t base = host_queries_[q].cand_base;
    const std::uint64_t n = shortest_length(q);
    select(base, n, num_.as<unsigned long long>() + q);
    CUDA_CHECK(cudaMemcpyAsync(&count, num_.as<unsigned long long>() + q, 8, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

std::vector<std::uint32_t> GpuBatch::run_one(const IntersectVariant& v, std::size_t q, cudaStream_t stream) {
  if (!v.mark || !v.batched || !v.compacts)
    throw Error(std::string("'") + v.name + "' does not answer one query alone (the compacting GPU batch rows do)");
  if (q >= host_queries_.size()) throw Error("no query " + std::to_string(q + 1) + " in the batch");
  const int t0 = shortest_.begin[q], nt = shortest_.begin[q + 1] - t0;
  if (nt == 0) return {};
  const std::uint64_t base = host_queries_[q].cand_base;
  const std::uint64_t len = shortest_length(q);
  const std::size_t need = (len + nt) * 4;
  if (pinned_.bytes() < need) {
    pinned_ = PinnedBuffer(need, "one query's answers");
    // Page-locked memory is mapped: the device's address of it (the same one under unified addressing).
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&pinned_device_), pinned_.as<void>(), 0));
  }
  const unsigned* host = pinned_.as<unsigned>();
  IntersectArgs a = args_for(v);
  ensure_solo();
  CUDA_CHECK(cudaStreamWaitEvent(stream, staged_, 0));
  a.queries = solo_queries_.as<DeviceQuery>();
  a.cand = pinned_device_;
  a.tiles = shortest_.tiles.as<IntersectTile>() + t0;
  a.tile_counts = pinned_device_ + len;
  v.mark(a, nt, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<std::uint32_t> out;
  for (int t = 0; t < nt; ++t) {
    const unsigned* at = host + std::uint64_t(t) * kIntersectTile;
    out.insert(out.end(), at, at + host[len + t]);
  }
  return out;
}

namespace {
// Each compacting tile's answers (at its first candidate position) moved to `out` at its offset, so
// that the whole batch's answers come back in one copy: a copy a tile was thousands of
// synchronous copies, slower than the all-core CPU peers' whole batch (docs/intersection.md).
__global__ void pack_tile_answers_kernel(const unsigned* cand, const DeviceQuery* queries, const IntersectTile* tiles,
                                         const unsigned* counts, const unsigned long long* offsets, int ntiles,
                                         unsigned* out) {
  for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
    const unsigned n = counts[t];
    const unsigned* src = cand + queries[tiles[t].query].cand_base + tiles[t].begin;
    unsigned* dst = out + offsets[t];
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
  }
}
}  // namespace

// The answers of the last run, back to the host in one copy (the per-query study habit aside).
std::vector<std::vector<std::uint32_t>> GpuBatch::answers() {
  CUDA_CHECK(cudaDeviceSynchronize());
  const Tiling& tl = *last_tiling_;
  const int ntiles = tl.begin.back();
  std::vector<unsigned> counts(static_cast<std::size_t>(ntiles));
  CUDA_CHECK(cudaMemcpy(counts.data(), tl.counts.as<unsigned>(), counts.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<std::vector<std::uint32_t>> res(host_queries_.size());
  // Where each tile's answers go, packed query after query and tile after tile.
  std::vector<unsigned long long> at(counts.size() + 1, 0);
  for (std::size_t t = 0; t < counts.size(); ++t) at[t + 1] = at[t] + counts[t];
  const unsigned long long total = at.back();
  if (!last_batched_) {  // the study's habit: each query's answers where its candidates start
    for (std::size_t q = 0; q < res.size(); ++q) {
      res[q].resize(at[tl.begin[q + 1]] - at[tl.begin[q]]);
      if (!res[q].empty())
        CUDA_CHECK(cudaMemcpy(res[q].data(), out_.as<unsigned>() + host_queries_[q].cand_base, res[q].size() * 4,
                              cudaMemcpyDeviceToHost));
    }
    return res;
  }
  if (last_compacts_ && ntiles > 0) {  // packed on the device first: each tile's answers sit at its candidates
    // The offsets scanned on the device from the counts already there (no copy up).
    std::size_t scan_bytes = 0;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, tl.counts.as<unsigned>(),
                                             pack_offsets_.as<unsigned long long>(), ntiles));
    fit(pack_offsets_, static_cast<std::size_t>(ntiles) * 8, "the answers' offsets");
    fit(scan_temp_, scan_bytes, "the offsets' scan scratch");
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp_.as<void>(), scan_bytes, tl.counts.as<unsigned>(),
                                             pack_offsets_.as<unsigned long long>(), ntiles));
    const int grid = std::min(ntiles, 8 * device_status().props.multiProcessorCount);
    pack_tile_answers_kernel<<<grid, 256>>>(cand_.as<unsigned>(), queries_.as<DeviceQuery>(),
                                            tl.tiles.as<IntersectTile>(), tl.counts.as<unsigned>(),
                                            pack_offsets_.as<unsigned long long>(), ntiles, out_.as<unsigned>());
    CUDA_CHECK_LAUNCH();
  }  // else the select packed them query after query in out_ already
  if (answers_.bytes() < total * 4) {
    answers_ = PinnedBuffer();
    answers_ = PinnedBuffer(total * 4, "the batch's answers");
  }
  if (total) CUDA_CHECK(cudaMemcpy(answers_.as<unsigned>(), out_.as<unsigned>(), total * 4, cudaMemcpyDeviceToHost));
  const unsigned* got = answers_.as<unsigned>();
  for (std::size_t q = 0; q < res.size(); ++q) res[q].assign(got + at[tl.begin[q]], got + at[tl.begin[q + 1]]);
  return res;
}

}  // namespace distancies::intersect
