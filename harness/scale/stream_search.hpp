// Search over a model larger than the GPU memory it is given: the rows stay in page-locked host
// memory and flow to the GPU in chunks, each chunk copied on its own stream into one of
// `buffers` slots while the chunk before it is scanned by the registered pipeline (one query or
// a batch); each chunk's exact top k, its rows made global, merges into the answer. As FAISS's
// bfKnn tiles the database, but with our exact, certified pipelines: the answer equals the
// resident search's bit for bit (docs/scale.md). A one-query pipeline that scans a reduced copy
// streams that copy instead, made once into page-locked host memory (harness/scale/host_copy.hpp).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "harness/embeddings/batch_search.hpp"
#include "harness/embeddings/gpu_search.hpp"
#include "harness/scale/host_copy.hpp"
#include "runtime/pinned_model.hpp"
#include "variants/embeddings/stream_policy.hpp"

namespace distancies {

struct StreamOptions {
  std::size_t gpu_memory_limit = 0;  // bytes the stream may take in all (0: what the GPU has free)
  std::int64_t chunk_rows = 0;       // forced chunk size (0: the policy's, within the budget)
  int buffers = 0;                   // forced slot count, >= 2 (0: the policy's)
  // A one-query pipeline that scans a reduced copy (fused_i8, fused_f16, fused_bf16) streams that
  // copy, made once into page-locked host memory, and re-ranks its candidates' fp32 rows in place
  // in host memory (the rows must be mapped: PinnedModel's are). false: the fp32 rows are
  // streamed and the copy made per chunk on the GPU.
  bool reduced_from_host = true;
};

// What the last search did, for logs, JSON and the fixtures' counters.
struct StreamStats {
  StreamLayout layout;
  std::size_t bytes = 0;            // host-to-device bytes copied
  float copy_ms = 0;                // the copies alone (sum of their event intervals)
  float total_ms = 0;               // first copy issued to the answer merged
  int fallbacks = 0;                // chunk searches redone by a fallback pipeline
  std::string streamed;             // what the chunks carried: "fp32 rows", "i8 copy from host memory", ...
  float host_copy_ms = 0;           // making the host copy, once (the first search that streams it)
  std::int64_t centred_chunks = 0;  // a host copy's chunks that are centred (docs/batch.md, "Centred copies")
  double h2d_gb_per_s() const { return total_ms > 0 ? bytes / (total_ms * 1e6) : 0; }
};

class StreamSearcher {
 public:
  StreamSearcher(const HostRows& rows, StreamOptions opt);
  ~StreamSearcher();
  StreamSearcher(const StreamSearcher&) = delete;
  StreamSearcher& operator=(const StreamSearcher&) = delete;

  // One query: the best k rows over all chunks (global row numbers).
  std::vector<Hit> search(const Pipeline& p, const float* query, float query_norm, int k, Breakdown* bd = nullptr);
  std::vector<Hit> search(const Pipeline& p, const Query& q, int k, bool keep_query_words, Breakdown* bd = nullptr);

  // A batch (packed batch x dim floats).
  std::vector<std::vector<Hit>> search(const BatchPipeline& p, const float* queries, const float* norms, int batch,
                                       int k, Breakdown* bd = nullptr);
  std::vector<std::vector<Hit>> search(const BatchPipeline& p, const std::vector<Query>& qs, int k,
                                       bool keep_query_words, Breakdown* bd = nullptr);

  const StreamStats& last() const { return stats_; }
  const HostRows& rows() const { return rows_; }
  // Whether the reduced copy of that storage is made in host memory (auto weighs its making).
  bool holds_host_copy(Storage s) const { return host_copy_ && host_copy_->storage == s; }

 private:
  struct Slot;
  using ChunkSearch = std::vector<std::vector<Hit>> (*)(void* ctx, Slot& s, bool tail, Breakdown* bd);
  // Lays out the slots for this kind of search (sizes depend on the pipeline) when they change;
  // `copy` other than F32: the slots hold that reduced copy, made into host memory here once.
  void prepare(std::size_t per_row_extra, bool batch, Storage copy = Storage::F32);
  // Why the reduced copy of pipeline p cannot be streamed from host memory (empty: it can).
  std::string host_copy_refusal(const Pipeline& p) const;
  // Points the chunk's view at its rows and copies (a host copy), or tells it they changed.
  void bind_chunk(Slot& s, bool tail, std::int64_t c);
  // Issues every chunk's copy into its slot as the slots come free (a host thread: Feeder).
  struct Feeder;
  void feed(Feeder& f);
  struct ChunkPart {
    const char* src;
    char* dst;
    std::size_t bytes;
  };
  std::vector<ChunkPart> chunk_parts(Slot& s, std::int64_t lo, std::int64_t n) const;
  // Every chunk through `scan` (which searches one slot's view), merged per query.
  std::vector<std::vector<Hit>> run(int queries, int k, Breakdown* bd, void* ctx, ChunkSearch scan);

  HostRows rows_;
  StreamOptions opt_;
  StreamStats stats_;
  Stream copy_;
  std::vector<std::unique_ptr<Slot>> slots_;
  DeviceBuffer batch_queries_, batch_norms_;  // a batch's queries, uploaded once for every chunk
  bool slots_for_batch_ = false;
  std::size_t slots_extra_ = 0;
  Storage slots_copy_ = Storage::F32;    // what the slots hold: fp32 rows, or a host copy's chunks
  std::unique_ptr<HostCopy> host_copy_;  // the reduced copy in page-locked host memory
  std::string host_copy_failed_;         // why making it failed (out of memory): not tried again
  const float* mapped_rows_ = nullptr;   // rows_.vectors as the device addresses them (null: not mapped)
};

// Bytes the GPU can give a stream: the limit if set, else what is free now less a margin for
// the CUDA context's and cuBLAS's own allocations.
std::size_t stream_budget(std::size_t limit);

}  // namespace distancies
