// The trivial batch scan of tests/trivial_scan.cpp and the batch pipeline that uses it.
#pragma once
#include "variants/embeddings/batch_scans.hpp"

namespace distancies::testing {

constexpr const char* kTrivialScan = "host_exact";
constexpr const char* kTrivialBatchPipeline = "batch_host_scan";
extern const BatchScanRow& trivial_scan;
extern const BatchPipeline& trivial_batch_pipeline;

}  // namespace distancies::testing
