// The int8 walk's key arithmetic (kernels/embeddings/tiled_i8.cuh) run alone on the GPU over a
// tiled int8 copy's real scores: the upper key it appends a candidate under, and the lower bound
// its second pass's thresholds take from that key (lower_from_upper), against the fp64 truth of
// every (query, row) of models with one-hot, spiky and extreme-norm rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "batch_check.hpp"
#include "gpu_skip.hpp"
#include "kernels/embeddings/mma_filter_scan.cuh"
#include "kernels/embeddings/tiled_i8.cuh"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "test_models.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/precision.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

// Pair i: score I[i] of query bounds q[i] in a tile u[i], as the walk keys it (the float of its
// ordered key, as a candidate carries it) and the lower bound taken back from that key.
__global__ void key_bounds_kernel(const int* I, const float4* q, const float4* u, float fp32_bound, int n, float* upper,
                                  float* lower) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float e = tiled_i8::score_bound(q[i], u[i], fp32_bound);
  const float up = tiled_i8::upper_of(I[i], q[i].x, __frcp_ru(u[i].x), __frcp_rd(u[i].y), e);
  const float carried = from_ordered_bits(filter_scan::float_key(up));
  upper[i] = carried;
  lower[i] = tiled_i8::lower_from_upper(carried, q[i], u[i], fp32_bound);
}

template <class T>
DeviceBuffer upload(const std::vector<T>& v, const char* what) {
  DeviceBuffer d(v.size() * sizeof(T), what);
  CUDA_CHECK(cudaMemcpy(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

}  // namespace

TEST(TiledI8Keys, LowerBoundFromTheUpperKeyHolds) {
  DISTANCIES_REQUIRE_GPU();
  for (const int dim : {300, 7}) {
    const std::uint32_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", D = " + std::to_string(dim));
    Model m = random_model({1000, dim, seed, 16, 0});
    plant_hostile_rows(m, 300, 10.0f);  // one-hot, spiky, norms 1e-10 ... 1e10
    DeviceModel dm = upload_model(m);
    const TiledI8Copy& t = prepared_tiled_i8(dm);
    const int ldg = t.ldg, rows = static_cast<int>(m.rows);
    const HostTiledI8 copy = download_tiled_i8(t, rows);
    const int nq = 16;
    Batch b = random_batch(m, nq, seed);
    std::memcpy(b.q.data(), m.row(120), dim * sizeof(float));  // a one-hot query: many exact scores
    b.norms[0] = m.norms[120];
    const HostI8Queries iq = tiled_i8_queries_of(b, dim, ldg);
    const float G = i8_walk_fp32_bound(dim, dm.norm_range().min_norm);

    std::vector<int> I;
    std::vector<float4> qs, us;
    std::vector<double> cosine;
    for (int q = 0; q < nq; ++q)
      for (int r = 0; r < rows; ++r) {
        const float* x = m.row(copy.order[r]);
        double dot = 0, xx = 0;
        for (int j = 0; j < dim; ++j)
          dot += static_cast<double>(b.q[q * dim + j] * (1.0f / b.norms[q])) * x[j], xx += double(x[j]) * x[j];
        if (xx == 0) continue;
        long long s = 0;
        for (int j = 0; j < ldg; ++j)
          s += iq.codes[static_cast<std::size_t>(q) * ldg + j] * copy.codes[static_cast<std::size_t>(r) * ldg + j];
        I.push_back(static_cast<int>(s));
        qs.push_back(iq.bounds[q]);
        us.push_back(copy.tiles[r / 64]);
        cosine.push_back(dot / std::sqrt(xx));
      }
    const int n = static_cast<int>(I.size());
    ASSERT_GT(n, nq * (rows - 64));
    DeviceBuffer dI = upload(I, "scores"), dq = upload(qs, "query bounds"), du = upload(us, "tiles");
    DeviceBuffer dup(n * sizeof(float), "upper"), dlo(n * sizeof(float), "lower");
    key_bounds_kernel<<<(n + 255) / 256, 256>>>(dI.as<int>(), dq.as<float4>(), du.as<float4>(), G, n, dup.as<float>(),
                                                dlo.as<float>());
    CUDA_CHECK_LAUNCH();
    std::vector<float> upper(n), lower(n);
    CUDA_CHECK(cudaMemcpy(upper.data(), dup.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(lower.data(), dlo.get(), n * sizeof(float), cudaMemcpyDeviceToHost));

    long long bounded = 0;
    for (int i = 0; i < n; ++i) {
      const float4 q = qs[i], u = us[i];
      const double e = double(q.y) * u.z + double(q.z) * u.w + G;
      // Both bounds hold for the exact cosine with room for the re-rank's fp32 error (G).
      ASSERT_GE(upper[i], cosine[i] + G - 1e-12) << "pair " << i;
      if (I[i] <= 0) {
        ASSERT_EQ(lower[i], -INFINITY) << "pair " << i << ": a bound from a score of " << I[i];
        continue;
      }
      ASSERT_LE(lower[i], cosine[i] - G + 1e-12) << "pair " << i;
      // Not vacuous: where the score is clear of the bound, within a few roundings of the tile's
      // own lower bound s_q I / U_hi - E.
      const double tile_lower = double(q.x) * I[i] / u.y - e;
      if (double(q.x) * I[i] / u.x > 2 * e) {
        ASSERT_GE(lower[i], tile_lower - 1e-5 * (std::fabs(tile_lower) + e) - 1e-30) << "pair " << i;
        ++bounded;
      }
    }
    EXPECT_GT(bounded, n / 20) << "too few scores clear of their bound to test the lower bound's tightness";
  }
}
