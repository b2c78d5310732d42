// Sharded search: the model split by rows over the ranks of a process group (one GPU each);
// every rank finds its rows' exact top k (resident, or streamed when its shard does not fit),
// the candidate lists are all-gathered over NCCL, and every rank merges them (on its GPU where there
// are many) into the same answer, which equals one GPU's bit for bit (docs/scale.md). With one rank it is the same
// code (the all-gather copies one list), so it runs and is tested on any single GPU.
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

// Rows of host memory copied to a new resident model (a rank's shard).
DeviceModel upload_rows(const HostRows& rows);

struct ShardOptions {
  bool stream = false;  // stream the shard from host memory even if it would fit
  StreamOptions stream_options;
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

 private:
  void hold(const HostRows& mine, ShardOptions o);
  void stage_ahead();
  // Local lists (global rows) -> all ranks' lists -> merged, with the exchange timed into bd.
  std::vector<std::vector<Hit>> exchange(const std::vector<std::vector<Hit>>& local, int k, Breakdown* bd);

  NcclComm& comm_;
  std::int64_t first_ = 0, rows_ = 0, total_ = 0;
  std::unique_ptr<DeviceModel> resident_;
  std::unique_ptr<GpuSearcher> one_;
  std::unique_ptr<BatchSearcher> many_;
  std::unique_ptr<StreamSearcher> stream_;
  Stream stream_s_;
  DeviceBuffer send_, recv_, merged_;
  PinnedBuffer staged_;  // this rank's lists going up, then the merged (or gathered) ones coming back
  int fallbacks_ = 0;
};

}  // namespace distancies
