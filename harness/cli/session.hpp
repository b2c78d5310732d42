// A loaded model (on the GPU too when one is used) that answers queries one at a time or in
// batches, and prints each answer as text or one JSON object per query.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/cli/answer.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/repl.hpp"
#include "harness/embeddings/batch_search.hpp"
#include "harness/embeddings/data_probe.hpp"
#include "harness/embeddings/gpu_search.hpp"
#include "harness/formats.hpp"
#include "harness/scale/shard_search.hpp"
#include "harness/scale/stream_search.hpp"

namespace distancies::cli {

class Session {
 public:
  explicit Session(const SearchOptions& o);
  ~Session();

  // One query; `also_cpu` adds the study's sequential CPU search and compares.
  void run(const std::string& text, bool also_cpu);

  // Many lines at once, each a word, an expression, a blank or a comment line
  // (classify_batch_line): one object per query in order (an unknown word is that line's
  // error), then a summary that counts every line. Returns how many queries failed.
  int run_batch(const std::vector<BatchLine>& lines, bool also_cpu);
  int last_batch_queries() const { return last_batch_queries_; }  // asked in the last batch
  bool is_word(std::string_view w) const { return words().find(w) >= 0; }

 private:
  // The study's sequential CPU search: the answer (alone) or a check beside the GPU's hits.
  void add_cpu(Answer& a, const Query& q, bool beside_gpu) const;
  GpuTiming gpu_timing(const char* pipeline, Breakdown bd) const;
  // Under --variant auto: the pipeline for the next query or batch (variants/embeddings/auto_plan.hpp).
  void choose_one();
  void choose_batch(int batch);
  void measure_rates();
  BatchSearcher& batch_searcher();  // made on first use (it starts cuBLAS)
  // Model read and made resident on the GPU (the upload overlapped with a native file's read).
  void load(const SearchOptions& o);
  // Or kept in host memory and streamed, or sharded over the ranks of a process group.
  void load_scaled(const SearchOptions& o, const LoadOptions& lo, const char* why);
  // --gpus: this rank's rows of a native model alone (every row of another format's model).
  void load_sharded(const SearchOptions& o, const LoadOptions& lo, const StreamOptions& so);
  // Where query words and result rows are looked up: the model, or (a rank holding only its
  // rows) the native file's vocabulary.
  const WordSource& words() const { return vocab_ ? static_cast<const WordSource&>(*vocab_) : model_words_; }
  std::vector<Hit> search_one(const Query& q, Breakdown* bd);
  std::vector<std::vector<Hit>> search_many(const std::vector<Query>& qs, Breakdown* bd, BatchSummary& summary);
  void print(const Answer& a) const;
  // The queries of a batch, already told apart from its blank and comment lines (counted in
  // `summary`).
  int run_queries(const std::vector<BatchLine>& queries, bool also_cpu, BatchSummary summary);

  SearchOptions o_;
  Model model_;  // the whole model, or this rank's rows alone
  ModelWords model_words_{model_};
  std::unique_ptr<NativeVocabulary> vocab_;  // --gpus over a native model: every word, no vectors
  const Pipeline* one_ = nullptr;            // answers single queries (none: many_ as a batch of one)
  const BatchPipeline* many_ = nullptr;      // answers batches (none: one_ once per query)
  bool use_gpu_ = false;
  bool auto_ = false;           // --variant auto: one_/many_ chosen per query or batch
  std::string chosen_by_;       // why, for the timing line and JSON
  long long queries_seen_ = 0;  // single queries so far (the 16-bit copy pays after a few)
  std::unique_ptr<DeviceModel> dm_;
  std::unique_ptr<GpuSearcher> gpu_;
  std::unique_ptr<BatchSearcher> batch_;
  std::optional<DataRates> rates_;       // auto: the certificates' redo rates on this model
  std::unique_ptr<PinnedModel> pinned_;  // streaming: the model page-locked where it is
  std::unique_ptr<StreamSearcher> stream_;
  std::unique_ptr<NcclComm> comm_;  // --gpus: this rank's communicator
  std::unique_ptr<ShardSearcher> shard_;
  bool quiet_ = false;  // a rank other than 0 answers nothing
  int last_batch_queries_ = 0;
};

}  // namespace distancies::cli
