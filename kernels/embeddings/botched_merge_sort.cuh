// Study top-k stage 2, BotchedMergeSort: thread t merges sorted k-chunks 2t and 2t+1 into
// one k-chunk (the best k of both); the host calls it until one chunk is left. Defined in
// kernels/embeddings/botched_merge_sort.cu.
#pragma once

namespace distancies {

__global__ void botched_merge_kernel(const float* in_s, const int* in_r, int chunks, int k, float* out_s, int* out_r);

}  // namespace distancies
