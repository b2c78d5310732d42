// The deterministic synthetic model (`distancies gen`, and the benchmarks' default).
// Values are a pure function of (seed, row, column), so the host writer and the GPU
// generator in the benchmarks produce the same model bit for bit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/embeddings/data_family.hpp"  // family_value: shared with the GPU generator
#include "runtime/model.hpp"

namespace distancies {

constexpr std::int64_t kGloveRows = 2196016;  // GloVe 840B
constexpr int kGloveDim = 300;
constexpr std::uint64_t kDefaultSeed = 840;

// The study's query words; every synthetic vocabulary contains them.
const std::vector<std::string>& study_words();

// Sorted vocabulary of a synthetic model of `rows` words (rows >= study_words().size()).
std::vector<std::string> synthetic_vocabulary(std::int64_t rows);

// The whole model on the host (vectors, norms, words), of any data family.
Model make_synthetic_model(std::int64_t rows, int dim, std::uint64_t seed = kDefaultSeed,
                           const DataFamily& family = {});

// The data families by name (docs/data.md): "iid", "aniso:C" (one common direction, mean pairwise
// cosine C in (0, 1)), "dirs:C" (four directions of unequal weight, C in (0, 0.8)), "clustered",
// "heavy" (heavy-tailed norms). A bad name is an Error listing the known ones.
DataFamily make_family(const std::string& name, int dim);
std::string family_name(const DataFamily& f);
// The families every pipeline is measured and tested on, in order.
const std::vector<std::string>& standard_families();

}  // namespace distancies
