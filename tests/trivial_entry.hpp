// The trivial registry rows of tests/trivial_entry.cpp.
#pragma once
#include "variants/embeddings/registry.hpp"

namespace distancies::testing {

constexpr const char* kTrivialStage = "host_sort_topk";
constexpr const char* kTrivialPipeline = "V4_host_sort";
extern const TopkStage& trivial_stage;
extern const Pipeline& trivial_pipeline;

}  // namespace distancies::testing
