// Reduced-precision storage with an exact fp32 re-rank: policy and dispatch. Kernels in
// kernels/embeddings/reduced_scan_topk.cuh; the bound is docs/variants.md's.
#include <algorithm>

#include "kernels/embeddings/fused_scan_topk.cuh"
#include "kernels/embeddings/i8_scan_topk.cuh"
#include "kernels/embeddings/large_k_rerank.cuh"
#include "kernels/embeddings/reduced_scan_topk.cuh"
#include "runtime/device.hpp"
#include "variants/embeddings/grid.hpp"
#include "variants/embeddings/large_k_select.hpp"
#include "variants/embeddings/policy.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies {
namespace {

// Policy: variants/embeddings/policy.hpp.
using Scan = policy::Active::ReducedScan;
constexpr int kWarps = Scan::kWarps;
constexpr int kPairs = Scan::kPairs;
constexpr int kRows = 2 * kPairs;
constexpr int kSegs = Scan::kSegs;
constexpr int kBlocksPerSm = Scan::kBlocksPerSm;
constexpr int kRerankWarps = Scan::kRerankWarps;

// Up to k = kListsMaxK the scan keeps per-warp lists of K = max(64, 2k) candidates; above it
// (docs/variants.md, "Large k") it writes every row's key and a radix select takes the best
// K = max(4k, k + 512) (at most 2 kLargeKMax): more margin than the lists can hold, which is what
// the int8 and bf16 keys need to certify at k = 100.
constexpr int kListsMaxK = 32;
bool selects(int k) { return k > kListsMaxK; }
int candidates_for(int k) {
  if (!selects(k)) return std::max(64, 2 * k);
  return std::min(2 * kLargeKMax, std::max(4 * k, k + 512));
}
bool too_large(int k) { return k > kLargeKMax; }

int scan_blocks(int n) { return persistent_blocks(n, kRows * kWarps, kBlocksPerSm); }

// The int8 scan's shape (policy.hpp): its rows are half as long, so more are in flight.
using ScanI8 = policy::Active::ReducedScanI8;
static_assert(ScanI8::kRowsPerWarp == kI8RowsPerWarp, "the policy names the kernel's shape");
int i8_blocks(int n) { return persistent_blocks(n, ScanI8::kRowsPerWarp * ScanI8::kWarps, ScanI8::kBlocksPerSm); }
int blocks_for(Storage s, int n) { return s == Storage::I8 ? i8_blocks(n) : scan_blocks(n); }

// temp: one candidate list of K per scan block.
struct Layout {
  int K, chunks;
  float* lists_s;
  int* lists_r;
};

Layout layout(const TopkState& s) {
  Layout l{};
  l.K = candidates_for(s.k);
  l.chunks = blocks_for(s.model.storage, s.n);
  l.lists_s = static_cast<float*>(s.temp);
  l.lists_r = reinterpret_cast<int*>(l.lists_s + static_cast<std::size_t>(l.chunks) * l.K);
  return l;
}

// The select path's scratch: the radix select's, then the K chosen rows, their K exact
// similarities and rows.
struct SelectLayout {
  void* select_temp;
  int* rows;
  float* exact_s;
  int* exact_r;
};
std::size_t select_path_temp(int n, int K) {
  return round_up(large_k_temp_bytes(n), 256) + 3 * round_up(std::size_t(K) * 4, 256);
}
SelectLayout select_layout(const TopkState& s, int K) {
  SelectLayout l{};
  auto* base = static_cast<char*>(s.temp);
  l.select_temp = base;
  base += round_up(large_k_temp_bytes(s.n), 256);
  const std::size_t slot = round_up(std::size_t(K) * 4, 256);
  l.rows = reinterpret_cast<int*>(base);
  l.exact_s = reinterpret_cast<float*>(base + slot);
  l.exact_r = reinterpret_cast<int*>(base + 2 * slot);
  return l;
}

std::size_t reduced_temp(int n, int k) {
  if (selects(k) && !too_large(k)) return select_path_temp(n, candidates_for(k));
  const std::size_t K = static_cast<std::size_t>(candidates_for(std::min(k, kListsMaxK)));
  const std::size_t blocks = std::max(scan_blocks(n), i8_blocks(n));  // the stage does not know the copy
  return blocks * K * (sizeof(float) + sizeof(int));
}

void run_reduced_scan(TopkState& s, cudaStream_t stream) {
  if (!s.model.dot || !s.model.reduced || !s.status)
    throw Error("reduced_scan_topk needs the 16-bit model and a status flag");
  if (s.n == 0) {
    CUDA_CHECK(cudaMemsetAsync(s.status, 0, sizeof(int), stream));
    return;
  }
  if (too_large(s.k)) {  // cannot keep enough candidates: let the caller fall back
    CUDA_CHECK(cudaMemsetAsync(s.status, 1, sizeof(int), stream));
    return;
  }
  const bool all_keys = selects(s.k);
  Layout l = layout(s);
  if (all_keys) {  // every row's key into s.sims (capacity >= n): no lists
    l.K = 0;
    l.lists_s = s.sims;
    l.lists_r = nullptr;
  }
  const DotArgs& a = *s.model.dot;
  const std::size_t smem = s.model.reduced_ld * sizeof(float) + lists_bytes(kWarps, l.K);
  const int blocks = l.chunks;
  const auto* vec8 = static_cast<const uint4*>(s.model.reduced);
  if (s.model.storage == Storage::I8) {
    if (!s.model.row_scale) throw Error("reduced_scan_topk: the int8 copy needs its row scales");
    // The split query (2 x rld bytes) and the lists.
    const std::size_t smem8 = 2u * s.model.reduced_ld + lists_bytes(ScanI8::kWarps, l.K);
    auto launch = [&](auto kernel) {
      kernel<<<blocks, ScanI8::kWarps * 32, smem8, stream>>>(
          vec8, s.model.row_scale, s.model.reduced_ld, a.query, a.dim, a.query_norm, s.model.row_bound_factor, a.norms,
          s.n, l.K, l.lists_s, l.lists_r, s.status, s.model.row_correction, s.model.correction_weight);
    };
    constexpr int kW = ScanI8::kWarps, kS = ScanI8::kSegs, kB = ScanI8::kBlocksPerSm;
    const bool corrected = s.model.row_correction != nullptr;
    if (all_keys && corrected) launch(i8_scan_topk_kernel<kW, kS, kB, true, true>);
    if (all_keys && !corrected) launch(i8_scan_topk_kernel<kW, kS, kB, true>);
    if (!all_keys && corrected) launch(i8_scan_topk_kernel<kW, kS, kB, false, true>);
    if (!all_keys && !corrected) launch(i8_scan_topk_kernel<kW, kS, kB>);
  } else {
    auto launch = [&](auto kernel) {
      kernel<<<blocks, kWarps * 32, smem, stream>>>(vec8, s.model.reduced_ld, a.query, a.dim, a.query_norm, a.norms,
                                                    s.n, l.K, l.lists_s, l.lists_r, s.status);
    };
    const bool f16 = s.model.storage == Storage::F16;
    if (f16 && all_keys) launch(reduced_scan_topk_kernel<__half2, kWarps, kPairs, kSegs, kBlocksPerSm, true>);
    if (f16 && !all_keys) launch(reduced_scan_topk_kernel<__half2, kWarps, kPairs, kSegs, kBlocksPerSm>);
    if (!f16 && all_keys) launch(reduced_scan_topk_kernel<__nv_bfloat162, kWarps, kPairs, kSegs, kBlocksPerSm, true>);
    if (!f16 && !all_keys) launch(reduced_scan_topk_kernel<__nv_bfloat162, kWarps, kPairs, kSegs, kBlocksPerSm>);
  }
  CUDA_CHECK_LAUNCH();
}

// The select path's re-rank: the rows of the best K keys (a radix select; their order does not
// matter), their fp32 similarities (many blocks), the best k of those by rank, and the
// certificate against the K-th key, checked where the k-th is placed.
void run_select_rerank(TopkState& s, cudaStream_t stream) {
  const int K = candidates_for(s.k);
  const int m = std::min(K, s.n);
  const SelectLayout l = select_layout(s, K);
  const DotArgs& a = *s.model.dot;
  const RadixState* threshold = large_k_choose_into(s.sims, s.n, K, l.select_temp, l.rows, stream);
  constexpr int kExactWarps = 8;
  const int exact_blocks = static_cast<int>(ceil_div(m, kExactWarps));
  exact_similarities_kernel<kExactWarps>
      <<<exact_blocks, kExactWarps * 32, a.ld * sizeof(float), stream>>>(a, l.rows, m, l.exact_s, l.exact_r, s.status);
  CUDA_CHECK_LAUNCH();
  constexpr int kPlaceThreads = 256, kPlaceGroup = 8;
  const std::size_t smem = std::size_t(m) * sizeof(ScoredRow);
  allow_dynamic_smem(rank_place_kernel<kPlaceThreads, kPlaceGroup>, smem, "exact_rerank (large k)");
  LargeKCertificate cert;
  cert.threshold = threshold;
  cert.error_bound = s.model.error_bound;
  cert.shift = s.model.shift;
  cert.all_rows_seen = s.n <= K;
  cert.kk = std::min(s.k, s.n);
  cert.status = s.status;
  const int blocks = static_cast<int>(ceil_div(staged_place_threads(m, s.k, kPlaceGroup), kPlaceThreads));
  rank_place_kernel<kPlaceThreads, kPlaceGroup>
      <<<blocks, kPlaceThreads, smem, stream>>>(l.exact_s, l.exact_r, m, s.k, s.alt_sims, s.alt_idx, cert);
  CUDA_CHECK_LAUNCH();
  std::swap(s.sims, s.alt_sims);
  std::swap(s.idx, s.alt_idx);
  s.chunks = 1;
}

void run_exact_rerank(TopkState& s, cudaStream_t stream) {
  if (!s.model.dot || !s.status) throw Error("exact_rerank needs the fp32 model and a status flag");
  if (s.n == 0 || too_large(s.k)) return;
  if (selects(s.k)) return run_select_rerank(s, stream);
  const Layout l = layout(s);
  const DotArgs& a = *s.model.dot;
  const std::size_t smem = exact_rerank_smem(a.ld, l.K, s.k);
  allow_dynamic_smem(select_rerank_kernel<kRerankWarps>, smem, "exact_rerank");
  launch_dependent(select_rerank_kernel<kRerankWarps>, 1, kRerankWarps * 32, smem, stream, a,
                   static_cast<const float*>(l.lists_s), static_cast<const int*>(l.lists_r), l.chunks, l.K, s.k,
                   s.model.error_bound, s.sims, s.idx, s.status, s.model.shift);
  s.chunks = 1;
}

}  // namespace

TopkStage reduced_scan_topk_stage() {
  return TopkStage{"reduced_scan_topk",
                   "fused scan of the 16-bit or int8 model (fp32 accumulation), best K candidates per block; k > 32: "
                   "every row's key (int8: ranked by similarity plus the row's own bound)",
                   "beyond the study"}
      .takes(StageData::Model)
      .leaves(StageData::CandidateLists)
      .launched_by(run_reduced_scan, reduced_temp)
      .reading_the_model();
}

TopkStage exact_rerank_stage() {
  return TopkStage{"exact_rerank",
                   "one block: best K of the scan's lists, their fp32 re-rank (bit-identical to the fused scan); "
                   "certifies the top k; k > 32: a radix select of K keys and a many-block re-rank",
                   "beyond the study"}
      .takes(StageData::CandidateLists)
      .leaves(StageData::TopK)
      .follows("reduced_scan_topk")
      .launched_by(run_exact_rerank, reduced_temp)
      .reading_the_model();
}

}  // namespace distancies
