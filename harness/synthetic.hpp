// The deterministic synthetic model (`distancies gen`, and the benchmarks' default).
// Values are a pure function of (seed, row, column), so the host writer and the GPU
// generator in the benchmarks produce the same model bit for bit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/runtime/model.hpp"
#include "kernels/embeddings/synthetic_value.hpp"  // mix64, synthetic_value: shared with the GPU generator

namespace distancies {

constexpr std::int64_t kGloveRows = 2196016;  // GloVe 840B
constexpr int kGloveDim = 300;
constexpr std::uint64_t kDefaultSeed = 840;

// The study's query words; every synthetic vocabulary contains them.
const std::vector<std::string>& study_words();

// Sorted vocabulary of a synthetic model of `rows` words (rows >= study_words().size()).
std::vector<std::string> synthetic_vocabulary(std::int64_t rows);

// The whole model on the host (vectors, norms, words). Progress is optional.
Model make_synthetic_model(std::int64_t rows, int dim, std::uint64_t seed = kDefaultSeed);

}  // namespace distancies
