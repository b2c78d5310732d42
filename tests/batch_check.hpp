// The batch exactness rule: every query of a batch equals the fp64 oracle's top k and, bit for
// bit, what the one-query `fused` pipeline returns alone.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "harness/embeddings/gpu_search.hpp"
#include "oracle_check.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device_model.hpp"
#include "test_models.hpp"
#include "variants/embeddings/batch_scan.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/registry.hpp"

namespace distancies::testing {

struct Batch {
  std::vector<float> q;  // packed
  std::vector<float> norms;
};

// `batch` random queries.
inline Batch random_batch(const Model& m, int batch, std::uint32_t seed) {
  Batch b;
  for (int i = 0; i < batch; ++i) {
    const auto q = random_query(m.dim, seed + 7919u * i);
    b.q.insert(b.q.end(), q.begin(), q.end());
    b.norms.push_back(vector_norm(q.data(), m.dim));
  }
  return b;
}

// Row 7 and 40 exact copies of it, `stride` rows apart (the copies' rows, lowest first).
inline std::vector<int> plant_copies_of_row_7(Model& m, int stride) {
  std::vector<int> copies = {7};
  for (int i = 1; i <= 40; ++i) copies.push_back(7 + stride * i);
  for (int r : copies) {
    std::memcpy(m.vectors.data() + static_cast<std::size_t>(r) * m.ld, m.row(7), m.dim * sizeof(float));
    m.norms[r] = m.norms[7];
  }
  return copies;
}

// Query by query: the oracle's top k, and exactly what `fused` returns alone.
inline void expect_batch_exact(const Model& m, DeviceModel& dm, const Batch& b,
                               const std::vector<std::vector<Hit>>& got, int k) {
  GpuSearcher one(dm, &m);
  ASSERT_EQ(got.size(), b.norms.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE("query " + std::to_string(i));
    const float* q = b.q.data() + i * m.dim;
    expect_matches_oracle(m, q, got[i], k);
    const auto ref = one.search(pipeline("fused"), q, b.norms[i], k);
    ASSERT_EQ(got[i].size(), ref.size());
    for (std::size_t r = 0; r < ref.size(); ++r) {
      EXPECT_EQ(got[i][r].row, ref[r].row) << "rank " << r;
      EXPECT_EQ(got[i][r].sim, ref[r].sim) << "rank " << r << ": not fused's fp32 similarity";
    }
  }
}

// Rows 100 ... end - 1 of `m` made hard for an 8-bit copy: one-hot (100 ... 149), one element
// 1,000 times the rest (150 ... 199), and norms from 10^-decades to 10^decades (200 ... end - 1).
inline void plant_hostile_rows(Model& m, long long end, float decades) {
  const int dim = m.dim;
  for (long long r = 100; r < end; ++r) {
    float* v = m.vectors.data() + r * m.ld;
    if (r < 150) {
      for (int j = 0; j < dim; ++j) v[j] = j == static_cast<int>(r % dim) ? 1.0f : 0.0f;
    } else if (r < 200) {
      v[r % dim] *= 1000.0f;
    } else {
      const float scale =
          std::pow(10.0f, -decades + 2 * decades * static_cast<float>(r - 200) / static_cast<float>(end - 201));
      for (int j = 0; j < dim; ++j) v[j] *= scale;
    }
    m.norms[r] = vector_norm(v, dim);
  }
}

// A tiled int8 copy brought to the host: codes (rows x ldg), the sorted rows' places, the tiles.
struct HostTiledI8 {
  std::vector<signed char> codes;
  std::vector<int> order;
  std::vector<float4> tiles;
};
inline HostTiledI8 download_tiled_i8(const TiledI8Copy& t, int rows) {
  HostTiledI8 h;
  h.codes.resize(static_cast<std::size_t>(rows) * t.ldg);
  h.order.resize(static_cast<std::size_t>(rows));
  h.tiles.resize(static_cast<std::size_t>((rows + 63) / 64));
  CUDA_CHECK(cudaMemcpy(h.codes.data(), t.codes.get(), h.codes.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h.order.data(), t.order.get(), h.order.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h.tiles.data(), t.tiles.get(), h.tiles.size() * sizeof(float4), cudaMemcpyDeviceToHost));
  return h;
}

// The int8 walk's queries of a batch (tiled_i8_queries on the GPU), on the host: codes (batch x
// ldg) and per query s_q, A_q, B_q.
struct HostI8Queries {
  std::vector<signed char> codes;
  std::vector<float4> bounds;
};
inline HostI8Queries tiled_i8_queries_of(const Batch& b, int dim, int ldg, const TiledI8Projection& p = {}) {
  const int nq = static_cast<int>(b.norms.size());
  DeviceBuffer dq(b.q.size() * 4, "queries"), dn(nq * 4, "norms"), dc(static_cast<std::size_t>(nq) * ldg, "codes"),
      db(nq * sizeof(float4), "bounds");
  CUDA_CHECK(cudaMemcpy(dq.get(), b.q.data(), b.q.size() * 4, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(dn.get(), b.norms.data(), nq * 4, cudaMemcpyHostToDevice));
  tiled_i8_queries(dq.as<float>(), dn.as<float>(), nq, dim, ldg, p, dc.get(), db.as<float4>(), 0);
  HostI8Queries h;
  h.codes.resize(static_cast<std::size_t>(nq) * ldg);
  h.bounds.resize(static_cast<std::size_t>(nq));
  CUDA_CHECK(cudaMemcpy(h.codes.data(), dc.get(), h.codes.size(), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(h.bounds.data(), db.get(), nq * sizeof(float4), cudaMemcpyDeviceToHost));
  return h;
}

}  // namespace distancies::testing
