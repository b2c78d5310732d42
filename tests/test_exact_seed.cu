// The refine pass's thresholds from exact similarities (refine_seed_kernel, exact_kth_key in
// kernels/embeddings/mma_filter_scan.cuh) run alone on the GPU over hand-made candidate buffers:
// keys within E of each row's fp32 similarity less the query's shift, as the fp16 filter's are.
// The threshold must stay below every top-k row's lowest possible key (else the filter would drop
// it) and should sit within the rounding slack of the candidates' own k-th exact similarity, not
// a key error below it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "kernels/embeddings/mma_filter_scan.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/device_model.hpp"
#include "test_models.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

// out[q rows + r]: row r's fp32 similarity to query q, as every exact re-rank computes it.
__global__ void similarities_kernel(DotArgs a, const float* queries, const float* norms, float* out) {
  extern __shared__ __align__(16) float qf[];
  a.query = queries + static_cast<long long>(blockIdx.x) * a.dim;
  a.query_norm = norms[blockIdx.x];
  stage_query(a, qf);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int r = warp; r < a.rows; r += blockDim.x / 32) {
    const float s = row_similarity(a, reinterpret_cast<const float4*>(qf), r, lane);
    if (lane == 0) out[static_cast<long long>(blockIdx.x) * a.rows + r] = s;
  }
}

template <class T>
DeviceBuffer upload(const std::vector<T>& v, const char* what) {
  DeviceBuffer d(v.size() * sizeof(T), what);
  CUDA_CHECK(cudaMemcpy(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

// The candidate word as filter_scan::candidate_key builds it (-0 keyed as +0).
unsigned long long candidate_word(float key, int row) {
  const unsigned k = ordered_bits(key == 0.0f ? 0.0f : key);
  return static_cast<unsigned long long>(k) << 32 | static_cast<unsigned>(~row);
}

constexpr int kThreads = 1024, k = 10, nq = 6;
constexpr long long kCapacity = 400;
constexpr float E = 1e-4f;  // the keys' error bound
constexpr float kMargin = 2.0f * E * (1.0f + 0x1p-20f);

// A model with zero rows and 40 exact ties of row 0, six queries (query 0 is row 0: the ties),
// each row's fp32 similarity to each query as the re-rank computes it, and each query's
// candidates: a random 400 rows (query 4: fewer than k; query 0: 20 of the ties among them), keys
// within E / 4 of the similarity less the query's shift, as real keys lie inside their bound.
// Query 5 starts from a threshold above any key.
struct Seeded {
  Model m;
  DeviceModel dm;
  std::vector<float> queries, norms, shifts, sim;
  std::vector<unsigned long long> cand;
  std::vector<unsigned> counts, start;
  std::vector<std::vector<int>> picked;

  Seeded(int dim, bool shifted, std::uint32_t seed)
      : m(random_model({3000, dim, seed, 4, 40})),
        dm(upload_model(m)),
        norms(nq),
        shifts(nq, 0.0f),
        cand(static_cast<std::size_t>(nq) * kCapacity),
        counts(nq),
        start(nq, 0u),
        picked(nq) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f), noise(-E / 4, E / 4);
    queries.resize(static_cast<std::size_t>(nq) * dim);
    for (int q = 0; q < nq; ++q) {
      for (int j = 0; j < dim; ++j) queries[q * dim + j] = q == 0 ? m.row(0)[j] : unit(rng);
      norms[q] = vector_norm(&queries[q * dim], dim);
      if (shifted) shifts[q] = 0.5f + 0.5f * std::fabs(unit(rng));
    }
    similarities();
    start[5] = ordered_bits(4.0f);
    const int rows = static_cast<int>(m.rows);
    for (int q = 0; q < nq; ++q) {
      std::vector<int> all(rows);
      for (int r = 0; r < rows; ++r) all[r] = r;
      std::shuffle(all.begin(), all.end(), rng);
      if (q == 0)
        for (int d = 0; d < 20; ++d) all[d] = 13 * (d + 1);
      counts[q] = q == 4 ? k - 1 : static_cast<unsigned>(kCapacity);
      picked[q].assign(all.begin(), all.begin() + counts[q]);
      for (unsigned i = 0; i < counts[q]; ++i)
        cand[q * kCapacity + i] = candidate_word(sim[q * rows + picked[q][i]] - shifts[q] + noise(rng), picked[q][i]);
    }
  }

  DotArgs exact() const { return {dm.d_vectors(), dm.d_norms(), static_cast<int>(m.rows), m.dim, dm.ld}; }

  void similarities() {
    DeviceBuffer dq = upload(queries, "queries"), dn = upload(norms, "norms");
    DeviceBuffer dsim(static_cast<std::size_t>(nq) * m.rows * sizeof(float), "similarities");
    similarities_kernel<<<nq, 256, dm.ld * sizeof(float)>>>(exact(), dq.as<float>(), dn.as<float>(), dsim.as<float>());
    CUDA_CHECK_LAUNCH();
    sim.resize(static_cast<std::size_t>(nq) * m.rows);
    CUDA_CHECK(cudaMemcpy(sim.data(), dsim.get(), sim.size() * sizeof(float), cudaMemcpyDeviceToHost));
  }

  // refine_seed_kernel over the candidates from the starting thresholds: with the model's rows
  // (`exact`), or without them (DISTANCIES_EXACT_SEED=off: the keys' rule).
  std::vector<unsigned> refine(bool exact_rows, bool shifted) const {
    DeviceBuffer dq = upload(queries, "queries"), dn = upload(norms, "norms"), ds = upload(shifts, "shifts");
    DeviceBuffer dc = upload(cand, "candidates"), dk = upload(counts, "counts"), dt = upload(start, "thresholds");
    filter_scan::ExactSeed e{exact(), dq.as<float>(), dn.as<float>(), shifted ? ds.as<float>() : nullptr, nullptr};
    if (!exact_rows) e.exact.vectors = nullptr;
    const std::size_t smem = filter_scan::exact_seed_smem(kCapacity, dm.ld);
    CUDA_CHECK(cudaFuncSetAttribute(refine_seed_kernel<kThreads>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)));
    refine_seed_kernel<kThreads><<<nq, kThreads, smem>>>(dc.as<unsigned long long>(), kCapacity, dk.as<unsigned>(), k,
                                                         kMargin, e, dt.as<unsigned>());
    CUDA_CHECK_LAUNCH();
    std::vector<unsigned> out(nq);
    CUDA_CHECK(cudaMemcpy(out.data(), dt.get(), nq * sizeof(unsigned), cudaMemcpyDeviceToHost));
    return out;
  }

  // Query q's k-th best similarity over the whole model, over its candidates, and its k-th key.
  double kth(std::vector<double> v) const {
    std::nth_element(v.begin(), v.begin() + (k - 1), v.end(), std::greater<double>());
    return v[k - 1];
  }
  double model_kth(int q) const { return kth({sim.begin() + q * m.rows, sim.begin() + (q + 1) * m.rows}); }
  double candidates_kth(int q) const {
    std::vector<double> v;
    for (const int r : picked[q]) v.push_back(sim[q * m.rows + r]);
    return kth(v);
  }
  double kth_key(int q) const {
    std::vector<double> v;
    for (unsigned i = 0; i < counts[q]; ++i)
      v.push_back(from_ordered_bits(static_cast<unsigned>(cand[q * kCapacity + i] >> 32)));
    return kth(v);
  }
};

}  // namespace

TEST(ExactSeed, RefineThresholdBelowEveryTopRowAndAtTheCandidatesKth) {
  DISTANCIES_REQUIRE_GPU();
  for (const bool shifted : {false, true})
    for (const int dim : {300, 37}) {
      const std::uint32_t seed = fresh_seed();
      SCOPED_TRACE("seed " + std::to_string(seed) + ", D = " + std::to_string(dim) + (shifted ? ", shifted" : ""));
      const Seeded s(dim, shifted, seed);
      const std::vector<unsigned> got = s.refine(true, shifted), keys_rule = s.refine(false, shifted);
      for (const auto& v : {got, keys_rule}) {
        EXPECT_EQ(v[4], 0u) << "fewer than k candidates must leave the threshold";
        EXPECT_EQ(v[5], ordered_bits(4.0f)) << "a lower seed must not lower a threshold";
      }
      for (int q = 0; q < 4; ++q) {
        SCOPED_TRACE("query " + std::to_string(q));
        const double t = from_ordered_bits(got[q]);
        // Sound: every row of the model's top k has a key of at least its similarity - shift - E.
        EXPECT_LE(t, s.model_kth(q) - s.shifts[q] - E) << "the threshold would drop a top-k row";
        // Tight: at the candidates' k-th exact similarity but for the slack (2^-20 and the
        // roundings), above the k-th key less 2 E (the keys' rule, which the kernel keeps
        // without the model's rows).
        EXPECT_GE(t, s.candidates_kth(q) - s.shifts[q] - E - 0x1p-19);
        const float rule = std::nextafter(static_cast<float>(s.kth_key(q)) - kMargin, -INFINITY);
        EXPECT_EQ(keys_rule[q], ordered_bits(rule)) << "the keys' rule without the rows";
        EXPECT_GT(t, rule + E / 2) << "no better than the k-th key less 2 E";
      }
    }
}
