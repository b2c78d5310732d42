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

}  // namespace

TEST(ExactSeed, RefineThresholdBelowEveryTopRowAndAtTheCandidatesKth) {
  DISTANCIES_REQUIRE_GPU();
  constexpr int kThreads = 1024, k = 10, nq = 6;
  constexpr long long capacity = 400;
  constexpr float E = 1e-4f;  // the keys' error bound
  for (const bool shifted : {false, true})
    for (const int dim : {300, 37}) {
      const std::uint32_t seed = fresh_seed();
      SCOPED_TRACE("seed " + std::to_string(seed) + ", D = " + std::to_string(dim) + (shifted ? ", shifted" : ""));
      const Model m = random_model({3000, dim, seed, 4, 40});  // zero rows and 40 exact ties of row 0
      const DeviceModel dm = upload_model(m);
      const int rows = static_cast<int>(m.rows);
      std::mt19937 rng(seed);
      std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
      std::vector<float> queries(static_cast<std::size_t>(nq) * dim), norms(nq), shifts(nq, 0.0f);
      for (int q = 0; q < nq; ++q) {
        for (int j = 0; j < dim; ++j) queries[q * dim + j] = q == 0 ? m.row(0)[j] : unit(rng);  // query 0: the ties
        norms[q] = vector_norm(&queries[q * dim], dim);
        if (shifted) shifts[q] = 0.5f + 0.5f * std::fabs(unit(rng));
      }
      DeviceBuffer dq = upload(queries, "queries"), dn = upload(norms, "norms"), ds = upload(shifts, "shifts");
      DotArgs exact{dm.d_vectors(), dm.d_norms(), rows, dim, dm.ld, nullptr, 0.0f, nullptr, nullptr};
      DeviceBuffer dsim(static_cast<std::size_t>(nq) * rows * sizeof(float), "similarities");
      similarities_kernel<<<nq, 256, dm.ld * sizeof(float)>>>(exact, dq.as<float>(), dn.as<float>(), dsim.as<float>());
      CUDA_CHECK_LAUNCH();
      std::vector<float> sim(static_cast<std::size_t>(nq) * rows);
      CUDA_CHECK(cudaMemcpy(sim.data(), dsim.get(), sim.size() * sizeof(float), cudaMemcpyDeviceToHost));

      // Each query's candidates: a random third of the rows (query 4: fewer than k), keys within
      // E of the similarity less the shift. Query 5 starts from a threshold above any key.
      std::vector<unsigned long long> cand(static_cast<std::size_t>(nq) * capacity);
      std::vector<unsigned> counts(nq), thresholds(nq, 0u);
      thresholds[5] = ordered_bits(4.0f);
      std::vector<std::vector<int>> picked(nq);
      std::uniform_real_distribution<float> noise(-E / 4, E / 4);  // inside E, as real keys are
      for (int q = 0; q < nq; ++q) {
        std::vector<int> all(rows);
        for (int r = 0; r < rows; ++r) all[r] = r;
        std::shuffle(all.begin(), all.end(), rng);
        const int n = q == 4 ? k - 1 : static_cast<int>(capacity);
        if (q == 0)  // row 0's ties among them
          for (int d = 0; d < 20; ++d) all[d] = 13 * (d + 1);
        picked[q].assign(all.begin(), all.begin() + n);
        for (int i = 0; i < n; ++i) {
          const int r = picked[q][i];
          cand[q * capacity + i] = candidate_word(sim[q * rows + r] - shifts[q] + noise(rng), r);
        }
        counts[q] = n;
      }
      DeviceBuffer dc = upload(cand, "candidates"), dk = upload(counts, "counts"),
                   dt = upload(thresholds, "thresholds");
      const float margin = 2.0f * E * (1.0f + 0x1p-20f);
      const filter_scan::ExactSeed e{exact, dq.as<float>(), dn.as<float>(), shifted ? ds.as<float>() : nullptr,
                                     nullptr};
      const std::size_t smem = filter_scan::exact_seed_smem(capacity, dm.ld);
      CUDA_CHECK(cudaFuncSetAttribute(refine_seed_kernel<kThreads>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(smem)));
      refine_seed_kernel<kThreads><<<nq, kThreads, smem>>>(dc.as<unsigned long long>(), capacity, dk.as<unsigned>(), k,
                                                           margin, e, dt.as<unsigned>());
      CUDA_CHECK_LAUNCH();
      std::vector<unsigned> got(nq), keys_rule(nq);
      CUDA_CHECK(cudaMemcpy(got.data(), dt.get(), nq * sizeof(unsigned), cudaMemcpyDeviceToHost));
      // Without the model's rows (DISTANCIES_EXACT_SEED=off): the keys' rule, the k-th key less the margin.
      filter_scan::ExactSeed off = e;
      off.exact.vectors = nullptr;
      CUDA_CHECK(cudaMemcpy(dt.get(), thresholds.data(), nq * sizeof(unsigned), cudaMemcpyHostToDevice));
      refine_seed_kernel<kThreads><<<nq, kThreads, smem>>>(dc.as<unsigned long long>(), capacity, dk.as<unsigned>(), k,
                                                           margin, off, dt.as<unsigned>());
      CUDA_CHECK_LAUNCH();
      CUDA_CHECK(cudaMemcpy(keys_rule.data(), dt.get(), nq * sizeof(unsigned), cudaMemcpyDeviceToHost));

      for (const auto& v : {got, keys_rule}) {
        EXPECT_EQ(v[4], 0u) << "fewer than k candidates must leave the threshold";
        EXPECT_EQ(v[5], ordered_bits(4.0f)) << "a lower seed must not lower a threshold";
      }
      for (int q = 0; q < 4; ++q) {
        SCOPED_TRACE("query " + std::to_string(q));
        const double t = from_ordered_bits(got[q]);
        std::vector<double> model_sims(sim.begin() + q * rows, sim.begin() + (q + 1) * rows), cand_sims, keys;
        for (int i = 0; i < static_cast<int>(counts[q]); ++i) {
          cand_sims.push_back(sim[q * rows + picked[q][i]]);
          keys.push_back(from_ordered_bits(static_cast<unsigned>(cand[q * capacity + i] >> 32)));
        }
        const auto kth = [](std::vector<double> v) {
          std::nth_element(v.begin(), v.begin() + (k - 1), v.end(), std::greater<double>());
          return v[k - 1];
        };
        // Sound: every row of the model's top k has a key of at least its similarity - shift - E.
        EXPECT_LE(t, kth(model_sims) - shifts[q] - E) << "the threshold would drop a top-k row";
        // Tight: at the candidates' k-th exact similarity but for the slack (2^-20 and the
        // roundings), which is at least the k-th key less 2 E (the rule before) and above it.
        EXPECT_GE(t, kth(cand_sims) - shifts[q] - E - 0x1p-19);
        const float rule = std::nextafter(static_cast<float>(kth(keys)) - margin, -INFINITY);
        EXPECT_EQ(keys_rule[q], ordered_bits(rule)) << "the keys' rule without the rows";
        EXPECT_GT(t, rule + E / 2) << "no better than the k-th key less 2 E";
      }
    }
}
