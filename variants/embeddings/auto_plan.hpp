// `--variant auto`: the fastest registered exact pipeline for the work at hand, decided from a
// table of medians measured on one GPU (auto_policy.inc, written by scripts/auto_policy.py from
// a committed run; docs/variants.md, "auto", says how the decision is made).
#pragma once
#include <string>

#include "variants/embeddings/registry.hpp"

namespace distancies {

struct AutoChoice {
  const Pipeline* one = nullptr;        // one query at a time
  const BatchPipeline* many = nullptr;  // or a batch pipeline
  std::string why;                      // one line: what was compared
};

// One query. `expected_queries`: how many the session will answer (1 for `query WORD`; a REPL
// does not know, and asks again as queries come); `copy_made`: the 16-bit copy already exists.
// The 16-bit pipeline is chosen when its saving over the queries pays for making the copy, and
// k is within what its certificate covers.
AutoChoice auto_one_query(int k, long long expected_queries, bool copy_made);

// A batch of `batch` queries: the pipeline with the smallest predicted time (medians
// interpolated log-log between the measured batch sizes, plus the 16-bit copy when it does not
// exist yet), among those whose certificate covers k and whose scan runs a model of `dim`
// columns on a device of compute capability `cc_major` (0: not known, not checked; a refused
// scan would hand the whole batch to its fallback).
AutoChoice auto_batch(int batch, int k, bool copy_made, int dim = 0, int cc_major = 0);

// The GPU the table was measured on (printed beside the choice).
const char* auto_policy_measured_on();

}  // namespace distancies
