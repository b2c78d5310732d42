// Sharded search over the ranks of a process group (one GPU each): the model split by rows, every
// rank finding its rows' exact top k (resident, or streamed when its shard does not fit), the
// lists all-gathered over NCCL and merged by every rank (on its GPU where there are many) into the
// same answer, which equals one GPU's bit for bit (docs/scale.md); or, where every rank holds every
// row (replicas), a large batch's queries split over the ranks and their answers gathered. With one
// rank it is the same code (the all-gather copies one list), so it runs and is tested on any GPU.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "harness/scale/nccl_comm.hpp"
#include "harness/scale/stream_search.hpp"
#include "kernels/common/merge_lists.cuh"

namespace distancies {

// Rows [first, last) of rank `rank` of `size`: an even split, the first rows % size ranks one more.
std::pair<std::int64_t, std::int64_t> shard_rows(std::int64_t rows, int rank, int size);

// One rank's candidates as they travel: k per query, padded with row -1.
using ShardHit = ListHit;
// The gathered lists (ranks x queries x k, rank-major) merged into each query's top k: on the host,
// and on the GPU (merge_lists_kernel; the exchange's), which must agree bit for bit.
std::vector<std::vector<Hit>> merge_gathered(const std::vector<ShardHit>& gathered, int ranks, int queries, int k);
// Gathered entries (ranks x queries x k) from which the exchange merges on the GPU: below, and
// with one rank, the host's merge costs less than the device's two launches.
constexpr std::size_t kDeviceMergeFrom = std::size_t(1) << 14;
std::vector<std::vector<Hit>> merge_gathered_on_device(const std::vector<ShardHit>& gathered, int ranks, int queries,
                                                       int k);

// The answers of a queries split gathered (ranks x per x k, rank-major; rank r answered queries
// shard_rows(batch, r, ranks), padded to `per` queries and to k with row -1) laid end to end into
// the batch's, padding dropped.
std::vector<std::vector<Hit>> concatenate_gathered(const std::vector<ShardHit>& gathered, int ranks, int per, int batch,
                                                   int k);

// Rows of host memory copied to a new resident model (a rank's shard).
DeviceModel upload_rows(const HostRows& rows);

// How a batch is split over ranks that each hold every row (ShardOptions::replicate): by rows
// (each rank searches its rows for every query, the lists merged) or by queries (each rank answers
// its share of the queries over every row, as FAISS's IndexReplicas does; the answers laid end to
// end). Auto: by queries from kSplitQueriesFrom queries a batch, where a rank's fixed costs a query
// (selection, re-rank) and the shard's looser thresholds cost more than each rank reading every
// row (docs/scale.md, "Replicas"). A rank that holds only its rows always splits by rows.
enum class Split { Rows, Queries, Auto };
constexpr int kSplitQueriesFrom = 512;
Split split_for(Split asked, bool replicated, int batch);
const char* split_name(Split s);

struct ShardOptions {
  bool stream = false;  // stream the shard from host memory even if it would fit
  StreamOptions stream_options;
  bool replicate = false;  // every rank holds every row, resident (a batch may split its queries)
};

class ShardSearcher {
 public:
  // This rank's rows of `all` (the whole model in host memory): made resident on the GPU, or
  // streamed from `all` (which must then be page-locked: PinnedModel) when asked or when
  // they do not fit.
  ShardSearcher(NcclComm& comm, const HostRows& all, ShardOptions o);
  // This rank's rows alone (`mine`: rows [first_row, first_row + mine.rows) of a model of
  // total_rows, read from the file by this rank only), resident or streamed as above.
  ShardSearcher(NcclComm& comm, const HostRows& mine, std::int64_t first_row, std::int64_t total_rows, ShardOptions o);
  // This rank's rows given already resident (a shard the fixture generated on its GPU).
  ShardSearcher(NcclComm& comm, DeviceModel shard, std::int64_t first_row, std::int64_t total_rows);
  // Every row given already resident (a replica): a batch splits by rows or by queries (set_split).
  ShardSearcher(NcclComm& comm, DeviceModel whole);
  ~ShardSearcher();

  std::vector<Hit> search(const Pipeline& p, const float* query, float query_norm, int k, Breakdown* bd = nullptr);
  std::vector<Hit> search(const Pipeline& p, const Query& q, int k, bool keep_query_words, Breakdown* bd = nullptr);
  std::vector<std::vector<Hit>> search(const BatchPipeline& p, const float* queries, const float* norms, int batch,
                                       int k, Breakdown* bd = nullptr);
  std::vector<std::vector<Hit>> search(const BatchPipeline& p, const std::vector<Query>& qs, int k,
                                       bool keep_query_words, Breakdown* bd = nullptr);

  std::int64_t first_row() const { return first_; }
  std::int64_t shard_rows() const { return rows_; }
  bool streamed() const { return stream_ != nullptr; }
  int last_fallbacks() const { return fallbacks_; }
  bool replicated() const { return whole_ != nullptr; }
  // The split a batch takes on a replica (Auto by default; Rows or Queries to measure one).
  void set_split(Split s) { split_ = s; }
  Split last_split() const { return last_split_; }

 private:
  void hold(const HostRows& mine, ShardOptions o);
  void replicate(DeviceModel whole);
  void stage_ahead();
  // A replica's queries split: this rank's share of the batch (shard_rows(batch, rank, size))
  // searched over every row, then every rank's answers (exchange_answers).
  std::vector<std::vector<Hit>> search_queries(const BatchPipeline& p, const float* queries, const float* norms,
                                               int batch, int k, Breakdown* bd);
  // This rank's lists (global rows, at most `per` queries of k, padded) staged in page-locked
  // memory with room for `back` entries after them, all-gathered into recv_ and waited for; returns
  // where the `back` entries may come down.
  ShardHit* gather(const std::vector<std::vector<Hit>>& local, int per, int k, std::size_t back);
  // Local lists (global rows) -> all ranks' lists -> merged, with the exchange timed into bd.
  std::vector<std::vector<Hit>> exchange(std::vector<std::vector<Hit>> local, int k, Breakdown* bd);
  // This rank's answers to its share of a batch -> every rank's, laid end to end (timed into bd).
  std::vector<std::vector<Hit>> exchange_answers(std::vector<std::vector<Hit>> local, int batch, int k, Breakdown* bd);

  NcclComm& comm_;
  std::int64_t first_ = 0, rows_ = 0, total_ = 0;
  std::unique_ptr<DeviceModel> resident_;
  std::unique_ptr<GpuSearcher> one_;
  std::unique_ptr<BatchSearcher> many_;
  std::unique_ptr<StreamSearcher> stream_;
  std::unique_ptr<DeviceModel> whole_;         // a replica's every row (resident_ then views its shard)
  std::unique_ptr<BatchSearcher> whole_many_;  // a replica's queries split
  Split split_ = Split::Auto, last_split_ = Split::Rows;
  Stream stream_s_;
  DeviceBuffer send_, recv_, merged_;
  PinnedBuffer staged_;  // this rank's lists going up, then the merged (or gathered) ones coming back
  int fallbacks_ = 0;
};

}  // namespace distancies
