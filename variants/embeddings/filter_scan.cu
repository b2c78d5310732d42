// The filtered mma batch scan, host side: query tiles a block, the sample that seeds the
// thresholds, each query's candidate buffer, the launches (sample, seed, filter, select), and its
// two registered rows: filtered_mma (every pass on the fp16 copy) and filtered_i8 (the last pass
// on the tiled int8 copy).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "kernels/embeddings/mma_filter_rows.cuh"
#include "kernels/embeddings/mma_filter_scan.cuh"
#include "kernels/embeddings/mma_filter_shared.cuh"
#include "kernels/embeddings/segment_select.cuh"
#include "kernels/embeddings/wide_rerank.cuh"
#include "runtime/env_setting.hpp"
#include "runtime/launch.hpp"
#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/filter_gemm.hpp"
#include "variants/embeddings/precision.hpp"

namespace distancies {
namespace {

using Policy = policy::Active::FilterScan;
static_assert(Policy::kWarps == filter_scan::kWarps, "the kernel's warps are the policy's");

int chunks_of(int dim) { return ceil_div(reduced_leading_dim(dim), 32); }
// A tile of 16 queries' A fragments (1 KB a chunk).
std::size_t tile_smem(int dim) { return filter_scan::query_smem(1, chunks_of(dim)); }

// DISTANCIES_FILTER_TILES (1, 2, 4 or 8) caps the query tiles a block takes and
// DISTANCIES_FILTER_UNITS (1 or 2) sets the 16-row units a warp takes with 8 tiles, to measure
// the other shapes without a rebuild; unset, the policy's.
int env_choice(const char* name, std::initializer_list<int> allowed, int otherwise) {
  const char* env = std::getenv(name);
  if (env == nullptr) return otherwise;
  const std::string v(env);
  for (int t : allowed)
    if (v == std::to_string(t)) return t;
  throw Error(std::string(name) + " must be one of the shapes compiled in, not '" + v + "'");
}
int max_tiles() {
  static const int most = env_choice("DISTANCIES_FILTER_TILES", {1, 2, 4, 8}, Policy::kMaxTiles);
  return most;
}
int units_at_max_tiles() {
  static const int units = env_choice("DISTANCIES_FILTER_UNITS", {1, 2}, Policy::kUnitsAtMaxTiles);
  return units;
}

// Tiles of 16 queries a block: enough for the batch (a power of two), as many as fit.
int tiles_for(int batch, int dim) {
  int tiles = 1;
  while (tiles < max_tiles() && 16 * tiles < batch) tiles *= 2;
  while (tiles > 1 && tiles * tile_smem(dim) > Policy::kMaxQuerySmem) tiles /= 2;
  return tiles;
}
// 16-row units a warp multiplies at a time: two below the most tiles (the accumulators fit).
int units_for(int tiles) { return tiles < Policy::kMaxTiles ? 2 : units_at_max_tiles(); }

// A whole number from the environment within [lo, hi], or `otherwise` where it is not set.
int env_count(const char* name, int lo, int hi, int otherwise) {
  const char* env = std::getenv(name);
  if (env == nullptr) return otherwise;
  const int v = std::atoi(env);
  if (v < lo || v > hi || std::to_string(v) != env)
    throw Error(std::string(name) + " must be " + std::to_string(lo) + " ... " + std::to_string(hi) + ", not '" + env +
                "'");
  return v;
}

// The wgmma walk's refinement sample: every refine_stride()-th 64-row tile (the policy's, or
// DISTANCIES_GEMM_REFINE, 1 ... 256, 1 for none, to measure others without a rebuild).
int refine_stride() {
  static const int stride = env_count("DISTANCIES_GEMM_REFINE", 1, 256, Policy::kGemmRefineStride);
  return stride;
}

// The int8 walk's first pass: every i8_first_stride()-th tile (the policy's, or
// DISTANCIES_I8_FIRST, 1 ... 64, 1 for one pass, to measure others without a rebuild).
int i8_first_stride() {
  static const int stride = env_count("DISTANCIES_I8_FIRST", 1, 64, Policy::kI8FirstStride);
  return stride;
}

// The batch from which the int8 walk goes in two passes (the policy's, or
// DISTANCIES_I8_TWO_PASS_FROM, 1 ... 65536, to measure others without a rebuild).
int i8_two_pass_from() {
  static const int from = env_count("DISTANCIES_I8_TWO_PASS_FROM", 1, 65536, Policy::kI8TwoPassFrom);
  return from;
}

using Kernel = void (*)(FilterScanArgs);

// The walk over the rows (DISTANCIES_FILTER_WALK forces one where it can run, for measuring):
//   gemm:   the filter pass from kGemmMinQueries queries on a 9.0 device, rows of at most 320
//           columns (wgmma_filter.cuh, CUTLASS); its sample pass takes the walk below;
//   shared: 8 query tiles, a row's chunks at most kSharedChunks and sm_90 (mma_filter_shared.cuh);
//   rows:   up to kRowsMaxTiles query tiles where the ring fits (mma_filter_rows.cuh);
//   chunks: everything else (mma_filter_scan_kernel).
enum class Walk { Chunks, Rows, Shared };
int forced_walk() {
  static const int forced = [] {
    const char* env = std::getenv("DISTANCIES_FILTER_WALK");
    if (env == nullptr) return -1;
    const std::string v(env);
    if (v == "chunks") return 0;
    if (v == "rows") return 1;
    if (v == "shared") return 2;
    if (v == "gemm") return 3;
    throw Error("DISTANCIES_FILTER_WALK must be gemm, chunks, rows or shared, not '" + v + "'");
  }();
  return forced;
}
bool gemm_walk(int batch, int ldg) {
  const int forced = forced_walk();
  const cudaDeviceProp& p = device_status().props;
  return (forced == 3 || (forced < 0 && batch >= Policy::kGemmMinQueries)) && filter_gemm_fits(ldg, p.major, p.minor);
}
Walk walk_for(int tiles, int dim) {
  const int forced = forced_walk() == 3 ? -1 : forced_walk();
  const bool shared_fits =
      tiles == Policy::kMaxTiles && chunks_of(dim) <= Policy::kSharedChunks && device_status().props.major >= 9;
  const bool rows_fit =
      filter_scan::query_smem(tiles, chunks_of(dim)) + filter_scan::rows_ring_smem(reduced_leading_dim(dim)) <=
      Policy::kRowsMaxSmem;
  if (forced == 2 && shared_fits) return Walk::Shared;
  if (forced == 1 && rows_fit) return Walk::Rows;
  if (forced == 0) return Walk::Chunks;
  if (forced < 0 && shared_fits) return Walk::Shared;
  if (forced < 0 && rows_fit && tiles <= Policy::kRowsMaxTiles) return Walk::Rows;
  return Walk::Chunks;
}

template <bool kSample>
Kernel rows_kernel_of(int tiles) {
  switch (tiles) {
    case 1:
      return mma_filter_rows_kernel<1, kSample>;
    case 2:
      return mma_filter_rows_kernel<2, kSample>;
    case 4:
      return mma_filter_rows_kernel<4, kSample>;
    default:
      return mma_filter_rows_kernel<8, kSample>;
  }
}

static_assert(Policy::kSharedChunks == 10, "the shared walk is compiled for 10 chunks");

template <bool kSample>
Kernel kernel_of(int tiles, int units, Walk walk) {
  if (walk == Walk::Shared) return mma_filter_shared_kernel<10, kSample>;
  if (walk == Walk::Rows) return rows_kernel_of<kSample>(tiles);
  switch (tiles) {
    case 1:
      return mma_filter_scan_kernel<1, 2, kSample>;
    case 2:
      return mma_filter_scan_kernel<2, 2, kSample>;
    case 4:
      return mma_filter_scan_kernel<4, 2, kSample>;
    default:
      return units == 2 ? mma_filter_scan_kernel<8, 2, kSample> : mma_filter_scan_kernel<8, 1, kSample>;
  }
}
static_assert(Policy::kMaxTiles == 8, "kernel_of's table follows the policy");

// The sample: `groups` 16-row groups spread evenly (every stride-th), none if not worth it.
struct Sample {
  long long groups = 0, stride = 0;
};
Sample sample_for(long long rows, int K) {
  const long long want =
      std::max<long long>(ceil_div(static_cast<long long>(K), 16ll),
                          static_cast<long long>(std::ceil(std::sqrt(double(K) * double(rows)) / 16)));
  if (rows < Policy::kSeedRatio * want * 16) return {};
  return {want, rows / 16 / want};
}

// Blocks of `kernel` an SM runs with `smem` bytes each, asked once per kernel, size and device.
// The kernel's shared-memory allowance is set before every launch all the same: it is one value
// per kernel, and a launch with less may have lowered it since.
int blocks_per_sm(Kernel kernel, std::size_t smem) {
  static std::mutex m;
  static std::map<std::tuple<Kernel, std::size_t, int>, int> known;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  allow_dynamic_smem(kernel, smem, "the filtered scan");
  const std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_tuple(kernel, smem, device);
  if (auto it = known.find(key); it != known.end()) return it->second;
  int fit = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, Policy::kWarps * 32, smem));
  if (fit < 1)
    throw Error("the filtered scan cannot run a block with " + std::to_string(smem) + " bytes of shared memory");
  return known[key] = fit;
}

// A launch of `kernel`: as many blocks as the GPU holds at once, a multiple of the query groups.
void launch_scan(Kernel kernel, FilterScanArgs f, std::size_t smem, cudaStream_t s) {
  const int fit = blocks_per_sm(kernel, smem);
  const int parts = std::max(1, device_status().props.multiProcessorCount * fit / f.qgroups);
  kernel<<<parts * f.qgroups, Policy::kWarps * 32, smem, s>>>(f);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

int filter_scan_i8_ldg(int dim) { return tiled_i8::plain_ldg(dim); }

std::optional<Refusal> filter_scan_i8_refusal(int dim, int cc_major) {
  if (cc_major > 0 && cc_major != 9) return Refusal{"the int8 walk needs a compute capability 9.0 device (wgmma s8)"};
  // The thresholds come from the fp16 wgmma walk's refine pass: both walks must take the rows.
  if (!filter_gemm_i8_fits(tiled_i8::projected_ldg(dim), 9, 0) || !filter_gemm_fits(reduced_leading_dim(dim), 9, 0))
    return Refusal{"the int8 walk takes rows of at most 320 columns (and needs CUTLASS at build time)"};
  return std::nullopt;
}

std::optional<Refusal> filter_scan_refusal(int dim) {
  if (tile_smem(dim) <= Policy::kMaxQuerySmem) return std::nullopt;
  return Refusal{"a " + std::to_string(dim) +
                 "-dimensional model's query fragments do not fit the filtered scan's shared memory"};
}

bool filter_scan_seeds(long long rows, int K) { return sample_for(rows, K).groups > 0; }

long long filter_scan_i8_capacity(long long rows, int K) {
  // A part's segment holds its share and a 64-row tile a part more: every row of a part's tiles
  // where the model is too short to seed (each appends all its rows).
  return filter_scan_capacity(rows, K) + 64ll * (tiled_i8::kMaxSegments + 1);
}

long long filter_scan_capacity(long long rows, int K) {
  const Sample sm = sample_for(rows, K);
  if (sm.groups == 0) return std::max(rows, 1ll);  // no threshold: every row is a candidate
  const long long sampled = sm.groups * 16;
  const long long expected = ceil_div(static_cast<long long>(K) * rows, sampled);
  return std::min(rows, std::max(sampled, Policy::kCapacityFactor * expected + 1024));
}

std::string filter_scan_walk(int batch, int dim) {
  const int tiles = tiles_for(std::min(batch, Policy::kMaxQueries), dim);
  if (gemm_walk(batch, reduced_leading_dim(dim))) return "gemm";
  switch (walk_for(tiles, dim)) {
    case Walk::Shared:
      return "shared";
    case Walk::Rows:
      return "rows";
    default:
      return "chunks";
  }
}

int filter_scan_max_queries() { return Policy::kMaxQueries; }
unsigned wide_first_from() { return wide_rerank::kFirstFrom; }
int filter_scan_queries(int batch) { return std::min(batch, filter_scan_max_queries()); }

namespace {

// What every query group of one filtered scan shares (filter_scan_tiles).
struct FilterPlan {
  int rank = 0;          // the thresholds bound the k-th best, not the K-th
  bool gemm = false;     // the wgmma walk
  bool refined = false;  // a refine pass raises the seeds before the last pass
  Sample sm;
  bool seeded = false;
  int tiles = 0, units = 0;
  Walk walk{};
  std::size_t smem = 0;
  float margin = 0;  // what a seed is lowered by
};

FilterPlan plan_filter(const BatchScanArgs& a, bool i8) {
  FilterPlan p;
  // The thresholds bound the k-th best similarity, not the K-th: every row of the true top k is
  // still appended, and a row left out scores below the k-th, so a query that appends fewer than
  // K candidates is answered by those it appended (docs/batch.md, "Thresholds at the k-th").
  p.rank = a.k;
  // The wgmma walk's refine pass follows the sample: then a sample of sqrt(k rows) rows is enough
  // (it seeds the refine, which sets the thresholds), 2.5 x fewer keys written and selected than
  // sqrt(K rows) at k = 10 (the sample and its seed: 0.16 ms at B = 1,024; docs/batch.md).
  p.gemm = gemm_walk(a.batch, a.ldg);
  // The int8 scan refines on the fp16 walk at every batch size: its last pass needs thresholds
  // near the k-th (a pass seeded from the sample alone would append k rows / sampled rows a query).
  p.refined = (i8 || p.gemm) && refine_stride() > 1;
  p.sm = sample_for(a.exact.rows, p.refined ? p.rank : a.K);
  // Worth it only with a finite bound to lower the seed by.
  p.seeded = p.sm.groups > 0 && std::isfinite(a.error_bound) && a.error_bound >= 0;
  p.tiles = tiles_for(a.batch, a.exact.dim);
  p.units = units_for(p.tiles);
  p.walk = walk_for(p.tiles, a.exact.dim);
  p.smem = p.walk == Walk::Shared
               ? filter_scan::shared_ring_smem(a.ldg)
               : filter_scan::query_smem(p.tiles, chunks_of(a.exact.dim)) +
                     (p.walk == Walk::Rows ? filter_scan::rows_ring_smem(a.ldg) : filter_scan::ring_smem(p.units));
  // Twice the error bound, a little more for the subtraction's rounding.
  p.margin = 2.0f * a.error_bound * (1.0f + 0x1p-20f);
  return p;
}

constexpr int kSelect = Policy::kSelectThreads;

// Which seeds recompute their best candidates in fp32 (docs/batch.md, "Seeds from exact
// similarities"): the int8 walk's reseed always; the refine where the copy is centred, where the
// keys' error is as wide as the spread of the best similarities (on i.i.d. rows the refine's sample
// decides its threshold, and the recomputation only costs). DISTANCIES_EXACT_SEED=both|refine|
// reseed|off instead, to measure each.
bool exact_seed_at(const char* pass, bool centred) {
  static const std::string on =
      env_setting("DISTANCIES_EXACT_SEED", {"auto", "both", "refine", "reseed", "off"}, "auto");
  if (on == "auto") return std::string(pass) == "reseed" || centred;
  return on == "both" || on == pass;
}

// What a seed kernel of `pass` recomputes exactly for the query group from q0 (`order`: the tiled
// int8 copy's, whose rows are sorted); no rows where the pass keeps its keys' rule.
filter_scan::ExactSeed exact_seed(const BatchScanArgs& a, const char* pass, int q0, const int* order = nullptr) {
  const float* shifts = certificate_shifts(a);
  filter_scan::ExactSeed e{a.exact, a.queries + static_cast<std::size_t>(q0) * a.exact.dim, a.query_norms + q0,
                           shifts ? shifts + q0 : nullptr, order};
  if (!exact_seed_at(pass, shifts != nullptr)) e.exact.vectors = nullptr;
  return e;
}

// The thresholds of the query group from q0: seeded from a sample (or zero), then refined where planned.
void seed_thresholds(const BatchScanArgs& a, const FilterPlan& p, const FilterScanArgs& f, int q0, cudaStream_t s) {
  unsigned* thresholds = a.thresholds + q0;
  if (p.seeded) {
    FilterScanArgs sample = f;
    sample.groups = p.sm.groups;
    sample.stride = p.sm.stride;
    launch_scan(kernel_of<true>(p.tiles, p.units, p.walk), sample, p.smem, s);
    const std::size_t seed_smem = filter_scan::select_smem(p.sm.groups * 16);
    allow_dynamic_smem(seed_from_sample_kernel<kSelect>, seed_smem, "seed_from_sample_kernel");
    seed_from_sample_kernel<kSelect><<<f.nq, kSelect, seed_smem, s>>>(a.candidates.entries, a.candidates.capacity,
                                                                      p.sm.groups * 16, p.rank, p.margin, thresholds);
    CUDA_CHECK_LAUNCH();
  } else {
    CUDA_CHECK(cudaMemsetAsync(thresholds, 0, f.nq * sizeof(unsigned), s));
  }
  if (p.refined && p.seeded) {
    // The wgmma walk's refinement: a filter pass over every refine_stride-th tile raises each
    // threshold to the k-th best it found (refine_seed_kernel), so that the whole pass appends
    // about k refine_stride candidates a query instead of k rows / sampled rows.
    CUDA_CHECK(cudaMemsetAsync(a.candidates.counts, 0, f.nq * sizeof(unsigned), s));
    filter_gemm_scan(f, refine_stride(), s);
    const std::size_t refine_smem = filter_scan::exact_seed_smem(a.candidates.capacity, a.exact.ld);
    allow_dynamic_smem(refine_seed_kernel<kSelect>, refine_smem, "refine_seed_kernel");
    refine_seed_kernel<kSelect><<<f.nq, kSelect, refine_smem, s>>>(a.candidates.entries, a.candidates.capacity,
                                                                   a.candidates.counts, p.rank, p.margin,
                                                                   exact_seed(a, "refine", q0), thresholds);
    CUDA_CHECK_LAUNCH();
  }
}

// One query group's last pass over every row (fp16, or `i8` the int8 copy) and its selection
// into the group's slice lists.
void last_pass(const BatchScanArgs& a, const FilterPlan& p, FilterScanArgs f, int q0, bool i8, cudaStream_t s) {
  f.groups = ceil_div(a.exact.rows, 16ll);
  f.stride = 1;
  const std::size_t first = static_cast<std::size_t>(q0) * a.K;
  const SliceLists out{a.lists_s + first, a.lists_r + first, 1, a.K};
  const std::size_t select_bytes = filter_scan::select_smem(a.candidates.capacity);
  if (i8) {  // its counts are per block part, in seg_counts (select_segments_kernel gathers them)
    FilterScanArgs g = f;
    g.ldg = a.i8.ldg;
    I8FilterArgs x{a.i8.order, a.i8.tiles, a.i8.query_bounds + q0, p.margin / 2, a.i8.fp32_bound, 0, a.i8.seg_counts};
    const void* queries = static_cast<const signed char*>(a.i8.queries) + static_cast<std::size_t>(q0) * a.i8.ldg;
    int parts = 0;
    const int first = i8_first_stride();
    if (first > 1 && p.seeded && a.batch >= i8_two_pass_from()) {
      // Two passes: every first-th tile, the thresholds raised to what its best candidates prove
      // (reseed_from_segments_kernel), then every other tile with its counts going on from the first's.
      parts = filter_gemm_scan_i8(g, x, a.i8.codes, queries, first, s);
      const std::size_t reseed_bytes = filter_scan::exact_seed_smem(a.candidates.capacity, a.exact.ld);
      allow_dynamic_smem(reseed_from_segments_kernel<kSelect>, reseed_bytes, "reseed_from_segments_kernel");
      reseed_from_segments_kernel<kSelect>
          <<<f.nq, kSelect, reseed_bytes, s>>>(a.candidates.entries, a.candidates.capacity, parts, p.rank, x,
                                               exact_seed(a, "reseed", q0, a.i8.order), a.thresholds + q0);
      CUDA_CHECK_LAUNCH();
      x.resume = 1;
      if (filter_gemm_scan_i8(g, x, a.i8.codes, queries, -first, s) != parts)
        throw Error("the int8 walk's two passes must have the same parts");
    } else {
      parts = filter_gemm_scan_i8(g, x, a.i8.codes, queries, 1, s);
    }
    allow_dynamic_smem(select_segments_kernel<kSelect>, select_bytes, "select_segments_kernel");
    select_segments_kernel<kSelect><<<f.nq, kSelect, select_bytes, s>>>(
        a.candidates.entries, a.candidates.capacity, a.i8.seg_counts, parts, a.candidates.capacity / parts, a.K, out,
        a.status + q0, a.i8.order, a.candidates.counts);
  } else {
    CUDA_CHECK(cudaMemsetAsync(a.candidates.counts, 0, f.nq * sizeof(unsigned), s));
    if (p.gemm)
      filter_gemm_scan(f, 1, s);
    else
      launch_scan(kernel_of<false>(p.tiles, p.units, p.walk), f, p.smem, s);
    allow_dynamic_smem(select_candidates_kernel<kSelect>, select_bytes, "select_candidates_kernel");
    select_candidates_kernel<kSelect><<<f.nq, kSelect, select_bytes, s>>>(a.candidates.entries, a.candidates.capacity,
                                                                          a.candidates.counts, a.K, out, a.status + q0);
  }
  CUDA_CHECK_LAUNCH();
}

// The wide re-rank's first stage (wide_first_kernel): on, or off with DISTANCIES_WIDE_FIRST=off to
// measure what it gains.
bool wide_first() {
  static const bool on = env_setting("DISTANCIES_WIDE_FIRST", {"on", "off"}, "on") == "on";
  return on;
}

// The wide re-rank (kernels/embeddings/wide_rerank.cuh) of the queries of one query group (`a`'s
// batch, at most kMaxQueries) the re-rank left uncertified, while the candidate buffers are still
// the group's last pass's.
void widen_group(const BatchScanArgs& a, cudaStream_t s) {
  if (a.batch == 0) return;
  const auto max_n = static_cast<unsigned>(std::min(a.candidates.capacity, filter_scan::kSmemKeys));
  // Blocks a query: enough that a few queries' thousands of rows fill the device (the blocks of
  // the queries left alone return at once), at least 8.
  constexpr int kWarps = 8;
  const int parts = std::clamp(ceil_div(16 * device_status().props.multiProcessorCount, a.batch), 8, 256);
  const std::size_t smem = static_cast<std::size_t>(a.exact.ld) * sizeof(float);
  // Dependent launches: all run on every pass, most often to find nothing to do, so their launch
  // latency is hidden behind the kernel ahead (each waits for it before reading the statuses).
  const std::size_t select_bytes = filter_scan::select_smem(max_n);
  if (wide_first() && a.k < wide_rerank::kFirst) {
    const std::size_t first_smem =
        static_cast<std::size_t>(wide_rerank::first_query_offset(max_n)) * 8 + static_cast<std::size_t>(a.exact.ld) * 4;
    allow_dynamic_smem(wide_first_kernel<kSelect>, first_smem, "wide_first_kernel");
    launch_dependent(wide_first_kernel<kSelect>, dim3(std::min(a.batch, device_status().props.multiProcessorCount)),
                     kSelect, first_smem, s, a.exact, a.queries, a.query_norms, a.candidates.entries,
                     a.candidates.capacity, a.candidates.counts, max_n, a.batch, a.k, certificate_bound(a),
                     certificate_shifts(a), a.out_s, a.out_r, a.status);
  }
  allow_dynamic_smem(wide_exact_kernel<kWarps>, smem, "wide_exact_kernel");
  launch_dependent(wide_exact_kernel<kWarps>, dim3(parts, a.batch), kWarps * 32, smem, s, a.exact, a.queries,
                   a.query_norms, a.candidates.entries, a.candidates.capacity, a.candidates.counts, max_n, a.status);
  allow_dynamic_smem(wide_select_kernel<kSelect>, select_bytes, "wide_select_kernel");
  launch_dependent(wide_select_kernel<kSelect>, dim3(a.batch), kSelect, select_bytes, s, a.candidates.entries,
                   a.candidates.capacity, a.candidates.counts, max_n, a.k, a.out_s, a.out_r, a.status);
}

// Whether a pass has several query groups, which share the candidate buffers: then the scan
// re-ranks (and widens) each group before the next reuses them, and nothing is left for after.
bool reranks_by_group(const BatchScanArgs& a) { return a.batch > Policy::kMaxQueries; }

// The re-rank (and the wide re-rank) of the query group of `nq` queries from q0: its own view of
// the pass's queries, lists, results and status.
void rerank_group(const BatchScanArgs& a, int q0, int nq, cudaStream_t s) {
  BatchScanArgs g = a;
  g.batch = nq;
  g.queries = a.queries + static_cast<std::size_t>(q0) * a.exact.dim;
  g.query_norms = a.query_norms + q0;
  const std::size_t lists = static_cast<std::size_t>(q0) * a.slices * a.K;
  g.lists_s = a.lists_s + lists;
  g.lists_r = a.lists_r + lists;
  g.out_s = a.out_s + static_cast<std::size_t>(q0) * a.k;
  g.out_r = a.out_r + static_cast<std::size_t>(q0) * a.k;
  g.status = a.status + q0;
  if (a.centring.shifts) g.centring.shifts = a.centring.shifts + q0;
  if (a.trace) g.trace = a.trace + 4 * static_cast<std::size_t>(q0);
  if (a.trace_counts) g.trace_counts = a.trace_counts + q0;
  batch_rerank(g, s);
  if (g.trace_counts)  // the group's candidate counts, before the next group's passes reuse them
    CUDA_CHECK(cudaMemcpyAsync(g.trace_counts, a.candidates.counts, static_cast<std::size_t>(nq) * sizeof(unsigned),
                               cudaMemcpyDeviceToDevice, s));
  if (a.widen) widen_group(g, s);
}

// A pass of one query group is re-ranked here (one of more groups was, in the scan).
void rerank_filtered(const BatchScanArgs& a, cudaStream_t s) {
  if (!reranks_by_group(a)) rerank_group(a, 0, a.batch, s);
}

// Every query scored against every row by mma_filter_scan_kernel (sample, seed, filter; `i8`: the
// last pass on the int8 copy), then each query's best K candidates written as its one slice list
// for batch_rerank; a query whose buffer overflowed gets status 1.
void filter_scan_tiles(const BatchScanArgs& a, cudaStream_t s, bool i8) {
  if (a.batch == 0) return;
  if (a.input != GemmInput::F16) throw Error("the filtered scan reads the fp16 copy");
  if (const auto no = batch_scan_refusal(*a.scan, a.exact.dim, a.K, device_status().props.major)) throw Error(no->why);
  if (a.candidates.capacity <
      (i8 ? filter_scan_i8_capacity(a.exact.rows, a.K) : filter_scan_capacity(a.exact.rows, a.K)))
    throw Error("filtered scan: candidate buffers too small");
  const FilterPlan p = plan_filter(a, i8);
  for (int q0 = 0; q0 < a.batch; q0 += Policy::kMaxQueries) {
    FilterScanArgs f;
    f.model = static_cast<const __half*>(a.model);
    f.ldg = a.ldg;
    f.rows = a.exact.rows;
    f.inv_norms = a.inv_norms;
    f.queries = static_cast<const __half*>(a.queries_g) + static_cast<std::size_t>(q0) * a.ldg;
    f.nq = std::min(Policy::kMaxQueries, a.batch - q0);
    f.chunks = chunks_of(a.exact.dim);
    f.qgroups = ceil_div(f.nq, 16 * p.tiles);
    f.thresholds = a.thresholds + q0;
    f.cand = a.candidates.entries;
    f.capacity = a.candidates.capacity;
    f.counts = a.candidates.counts;
    seed_thresholds(a, p, f, q0, s);
    last_pass(a, p, f, q0, i8, s);
    if (reranks_by_group(a)) rerank_group(a, q0, f.nq, s);
  }
}

std::optional<Refusal> mma_refusal(int dim, int, int cc_major) {
  if (auto no = filter_scan_refusal(dim)) return no;
  if (cc_major > 0 && cc_major < 8)
    return Refusal{"the filtered scan needs compute capability 8.0 (mma.sync m16n8k16)"};
  return std::nullopt;
}

// Candidate buffers for the queries of one launch and their fill, and every query's threshold.
std::vector<ScanBuffer> buffers_of(const ScanShape& sh, long long capacity) {
  const std::size_t Q = static_cast<std::size_t>(filter_scan_queries(sh.batch));
  return {{"candidate buffers", Q * capacity * sizeof(unsigned long long)},
          {"candidate counts", Q * sizeof(unsigned)},
          {"shared thresholds", static_cast<std::size_t>(sh.batch) * sizeof(unsigned)}};
}
constexpr int kOwnBuffers = 3;  // buffers_of's, before a scan's further ones

void bind_buffers(void* const* scratch, long long capacity, BatchScanArgs& a) {
  a.candidates.entries = static_cast<unsigned long long*>(scratch[0]);
  a.candidates.counts = static_cast<unsigned*>(scratch[1]);
  a.candidates.capacity = capacity;
  a.thresholds = static_cast<unsigned*>(scratch[2]);
}

// The int8 walk's tiled copy (the centred one where the model is centred; projected where its
// mean is long) and what the certificate needs of it.
void attach_i8_copy(const DeviceModel& m, const ModelCopyRow& prepared, const ModelCentre* centre, BatchScanArgs& a) {
  const TiledI8Copy& t = copy_of<TiledI8Copy>(m, prepared);
  a.i8.codes = t.codes.get();
  a.i8.order = t.order.as<int>();
  a.i8.tiles = t.tiles.as<float4>();
  a.i8.ldg = t.ldg;
  a.i8.fp32_bound = i8_walk_fp32_bound(m.dim, m.norm_range().min_norm);
  if (centre) a.i8.fp32_bound = with_centre_slack(a.i8.fp32_bound, centre->rho);
  a.i8.projection = t.extra > 0 && centre ? TiledI8Projection{centre->mean.as<float>(), centre->mean_norm2, t.extra}
                                          : TiledI8Projection{};
}

}  // namespace

BatchScanRow filtered_mma_scan() {
  BatchScanRow r{
      "filtered_mma",
      "mma.sync fragments of the fp16 copy against the batch's queries; scores under a threshold seeded from "
      "a sample dropped in registers, the rest appended to each query's buffer and selected",
      "beyond the study"};
  r.refusal = mma_refusal;
  r.slices = [](int, int, int, int) { return 1; };  // its select leaves one list a query
  r.scratch = [](const ScanShape& sh) { return buffers_of(sh, filter_scan_capacity(sh.rows, sh.K)); };
  r.bind = [](const ScanShape& sh, void* const* scratch, BatchScanArgs& a) {
    bind_buffers(scratch, filter_scan_capacity(sh.rows, sh.K), a);
  };
  r.score = [](const ScanStreams& io, const BatchScanArgs& a) { filter_scan_tiles(a, io.stream, false); };
  r.rerank = rerank_filtered;
  r.filters = true;
  r.queries_per_read = filter_scan_max_queries;
  return r;
}

BatchScanRow filtered_i8_scan() {
  BatchScanRow r{"filtered_i8",
                 "filtered_mma's thresholds (fp16 sample and refine), then the last pass over the tiled int8 copy on "
                 "the INT8 tensor cores (wgmma s8), candidates keyed by their upper bound",
                 "beyond the study"};
  r.refusal = [](int dim, int K, int cc_major) {
    if (auto no = mma_refusal(dim, K, cc_major)) return no;
    return filter_scan_i8_refusal(dim, cc_major);
  };
  r.slices = [](int, int, int, int) { return 1; };
  r.scratch = [](const ScanShape& sh) {
    std::vector<ScanBuffer> b = buffers_of(sh, filter_scan_i8_capacity(sh.rows, sh.K));
    const std::size_t B = static_cast<std::size_t>(sh.batch);
    b.push_back({"int8 queries", B * tiled_i8::projected_ldg(sh.dim)});  // the plain or the projected
    b.push_back({"int8 queries' bounds", B * sizeof(float4)});
    b.push_back({"int8 walk's segment counts",
                 static_cast<std::size_t>(filter_scan_queries(sh.batch)) * tiled_i8::kMaxSegments * 4});
    return b;
  };
  r.bind = [](const ScanShape& sh, void* const* scratch, BatchScanArgs& a) {
    bind_buffers(scratch, filter_scan_i8_capacity(sh.rows, sh.K), a);
    a.i8.queries = scratch[kOwnBuffers];
    a.i8.query_bounds = static_cast<float4*>(scratch[kOwnBuffers + 1]);
    a.i8.seg_counts = static_cast<unsigned*>(scratch[kOwnBuffers + 2]);
  };
  r.copy = "tiled_i8";
  r.attach_copy = attach_i8_copy;
  // The int8 codes of the same normalised queries (projected against the copy's mean where it is).
  r.prepare = [](const BatchScanArgs& a, cudaStream_t s) {
    tiled_i8_queries(a.queries, a.query_norms, a.batch, a.exact.dim, a.i8.ldg, a.i8.projection, a.i8.queries,
                     a.i8.query_bounds, s);
  };
  r.score = [](const ScanStreams& io, const BatchScanArgs& a) { filter_scan_tiles(a, io.stream, true); };
  r.rerank = rerank_filtered;
  r.filters = true;
  r.upper_bound_keys = true;
  r.element_bytes = 1.0;
  r.queries_per_read = filter_scan_max_queries;
  return r;
}

}  // namespace distancies
