// `--variant auto`: the fastest registered exact pipeline for the work at hand, decided from a
// table of medians measured on one GPU (auto_policy.inc, written by scripts/codegen/auto_policy.py from
// a committed run; docs/variants.md, "auto", says how the decision is made).
#pragma once
#include <limits>
#include <string>
#include <vector>

#include "variants/embeddings/registry.hpp"

namespace distancies {

struct AutoChoice {
  const Pipeline* one = nullptr;        // one query at a time
  const BatchPipeline* many = nullptr;  // or a batch pipeline
  std::string why;                      // one line: what was compared
  // auto_batch: every pipeline it priced and its predicted ms (the bench's auto fixture records
  // them beside the measured times, so a wrong choice shows which prediction was off).
  struct Priced {
    const BatchPipeline* pipeline;
    double ms;
  };
  std::vector<Priced> priced;
};

// What the data does to the certificates, measured on the resident model itself
// (harness/embeddings/data_probe.hpp): the share of a sample of its own rows, asked as a batch, that each
// batch pipeline had to redo on its fallback. The table was measured on i.i.d. data, where
// almost nothing is redone; on anisotropic or clustered data a reduced copy's bound can fail for
// every query (docs/data.md).
struct DataRates {
  struct Rate {
    const BatchPipeline* pipeline;
    double redone;  // 0 .. 1
    // This model's time of the probe batch (its fallback's share left out) over the table's at
    // that size: the table was measured at one shape (2,196,016 x 300), this model may not be.
    double scale = 1;
    long long seen = 0, seen_redone = 0;  // live traffic through it (observe)
    // The same at a large batch (more of the model's rows): where a scan turns compute-bound,
    // the work a query costs beyond its share of the model read (an int8 walk's candidates on
    // anisotropic data) shows only there. NaN: not measured.
    double scale_large = std::numeric_limits<double>::quiet_NaN();
    int large_batch = 0;
    // The same at a small batch: where the read dominates, a scan's cost per query beyond it
    // (more candidates on anisotropic data) is smaller than the probe batch shows.
    double scale_small = std::numeric_limits<double>::quiet_NaN();
    int small_batch = 0;
  };
  std::vector<Rate> batch;
  // The per-query loops (a one-query pipeline once a query, `batch_fused_loop`, `batch_i8_loop`),
  // timed on this model's own rows with their fallbacks: a loop's time is its per-query time
  // times the batch, so the measurement replaces the table (which need not list the loop).
  struct Loop {
    const BatchPipeline* pipeline;
    double ms_per_query;
  };
  std::vector<Loop> loops;
  double loop_ms(const BatchPipeline& p) const;  // NaN where not measured
  double one_query_f16 = 0;  // the share `fused_f16` could not certify (answered by `fused` after it)
  int probe_queries = 0;     // 0: not measured (the table alone decides)
  double redone(const BatchPipeline& p) const;
  // 1 where not measured; at `batch` above the probe's, interpolated (log-log) towards the
  // large batch's scale, and that one beyond it; below it, towards the small batch's, and that
  // one below it.
  double scale(const BatchPipeline& p, int batch = 0) const;
  // A batch the session answered with `p`: `redone` of `queries` went down its fallback. Once
  // the live queries outnumber the probe's, their share replaces the probe's, so a stream whose
  // fallbacks climb moves `auto` to another pipeline at its next batch (and one whose fallbacks
  // fall, back).
  void observe(const BatchPipeline& p, long long redone, long long queries);
};

// The table's predicted median of `pipeline` at `batch` (ms; NaN where it has no figures).
double auto_table_ms(std::string_view pipeline, int batch);

// One query. `expected_queries`: how many the session will answer (1 for `query WORD`; a REPL
// does not know, and asks again as queries come); `copy_made`: the 16-bit copy already exists.
// The 16-bit pipeline is chosen when its saving over the queries pays for making the copy, and
// k is within what its certificate covers.
// With `rates`, the 16-bit pipeline's saving counts the queries it could not certify on this
// model's own rows (each then costs its scan plus `fused`'s); where the rates timed the per-query
// loops, the one-query pipeline of the fastest loop is taken when it beats that choice.
AutoChoice auto_one_query(int k, long long expected_queries, bool copy_made, const DataRates* rates = nullptr);

// One query over a streamed model (in host memory, harness/scale/stream_search.hpp): its time is
// the bytes it moves, so `fused_i8`, whose int8 copy is streamed from host memory (about a quarter
// of the fp32 rows' bytes at dim 300), wins every query once that copy exists; making it costs
// about kStreamCopyMaking streamed fp32 queries (the `stream/fused_i8/...` fixtures' host_copy_ms
// over `stream/fused/...`'s time: kStreamCopyMaking, written by scripts/codegen/stream_copy_policy.py
// from the committed runs). Chosen when the queries seen pay for it (`copy_made`: it exists), k is
// within its certificate, and the last streamed int8 query did not send most of its chunks down
// the fallback (`redone`: that share, 0 .. 1).
#include "variants/embeddings/stream_copy_policy.inc"
AutoChoice auto_streamed_one_query(int k, int dim, long long expected_queries, bool copy_made, double redone);

// A batch of `batch` queries: the pipeline with the smallest predicted time (medians
// interpolated log-log between the measured batch sizes, plus the 16-bit copy when it does not
// exist yet, plus the predicted time of redoing its measured share of queries down its fallback
// chain when `rates` are given; a per-query loop the rates timed: its measured time a query
// times the batch), among those whose certificate covers k and whose scan runs a
// model of `dim` columns on a device of compute capability `cc_major` (0: not known, not
// checked; a refused scan would hand the whole batch to its fallback).
AutoChoice auto_batch(int batch, int k, bool copy_made, int dim = 0, int cc_major = 0,
                      const DataRates* rates = nullptr);

// The GPU the table was measured on (printed beside the choice).
const char* auto_policy_measured_on();

}  // namespace distancies
