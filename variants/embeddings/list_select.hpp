// The one-block selections of the best K from per-block sorted lists (kernels/common/list_select.cuh):
// a table, so tests and the select_lists fixtures cover each; the stages use the first.
#pragma once
#include <cuda_runtime.h>

#include "variants/registry_model.hpp"

namespace distancies {

// out = the best K (K <= 128) of `chunks` sorted lists of K at cand_s/cand_r + c * K.
using ListSelectLaunch = void (*)(const float* cand_s, const int* cand_r, int chunks, int K, float* out_s, int* out_r,
                                  cudaStream_t stream);

struct ListSelector {
  const char* name;
  const char* description;
  const char* origin;
  ListSelectLaunch launch;
};

const registry::Table<ListSelector>& list_selectors();

// The selection every list-keeping stage uses (list_selectors().front()).
void launch_select_from_lists(const float* cand_s, const int* cand_r, int chunks, int K, float* out_s, int* out_r,
                              cudaStream_t stream);

}  // namespace distancies
