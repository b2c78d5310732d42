// The tiled int8 copy's kernels (declared and explained in tiled_i8.cuh).
#include "kernels/embeddings/tiled_i8.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>

#include "kernels/embeddings/centre.cuh"

namespace distancies {

namespace {
// Rounded outward from a double computed within a few units of 2^-53 (2^-40 is room).
__device__ __forceinline__ float up(double v) { return __double2float_ru(v * (1 + 0x1p-40)); }
__device__ __forceinline__ float down(double v) { return __double2float_rd(v * (1 - 0x1p-40)); }

__device__ __forceinline__ double warp_sum(double v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(~0u, v, o);
  return v;
}

// This lane's part of mu . y for the centred row y (the projected copy's extra column), in double:
// each product of two floats is exact, so v is mu . y to within dim 2^-53 sum |mu_j y_j|.
__device__ __forceinline__ double mean_dot(const float* v, float n, const float* mean, int dim, int lane) {
  double d = 0;
  for (int j = lane; j < dim; j += 32) d += static_cast<double>(mean[j]) * centred_value(v[j], n, mean[j]);
  return d;
}
}  // namespace

__global__ void tiled_i8_keys_kernel(const float* x, long long rows, int dim, int ld, const float* norms,
                                     const float* mean, int extra, float* key, int* order) {
  const long long r = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const float* v = x + r * ld;
  const float n = mean ? norms[r] : 0.0f;
  float m = 0, ss = 0;
  for (int j = lane; j < dim; j += 32) m = fmaxf(m, fabsf(mean ? centred_value(v[j], n, mean[j]) : v[j]));
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(~0u, m, o));
  if (mean) {  // the centred row's key: the model row's norm over its largest centred value
    if (extra > 0) m = fmaxf(m, __double2float_ru(fabs(warp_sum(mean_dot(v, n, mean, dim, lane)))));
    if (lane == 0) {
      const float k = m > 0 && n > 0 ? 127.0f * (n / m) : __builtin_huge_valf();
      key[r] = k <= 3.0e38f ? k : __builtin_huge_valf();
      order[r] = static_cast<int>(r);
    }
    return;
  }
  // |x| / max |x| from the scaled row: no overflow or underflow whatever the norm.
  for (int j = lane; j < dim && m > 0; j += 32) ss = fmaf(v[j] / m, v[j] / m, ss);
  for (int o = 16; o > 0; o /= 2) ss += __shfl_xor_sync(~0u, ss, o);
  if (lane == 0) {
    key[r] = m > 0 && m <= 3.0e38f ? 127.0f * sqrtf(ss) : __builtin_huge_valf();
    order[r] = static_cast<int>(r);
  }
}

__global__ void __launch_bounds__(tiled_i8::kThreads)
    tiled_i8_codes_kernel(const float* x, long long rows, int dim, int ld, const float* norms, const float* mean,
                          int extra, const int* order, const float* sorted_key, int ldg, signed char* codes,
                          float4* tiles) {
  using namespace tiled_i8;
  using Reduce = cub::BlockReduce<double, kThreads>;
  using WarpSum = cub::WarpReduce<double>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ typename WarpSum::TempStorage warp_tmp[kThreads / 32];
  const long long first = static_cast<long long>(blockIdx.x) * kTileRows;
  const float key0 = sorted_key[first];
  const float U = key0 <= 3.0e38f ? key0 : 1.0f;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  double u_lo = 1e300, u_hi = 0, nu = 0, rho = 0;
  for (int i = warp; i < kTileRows; i += kThreads / 32) {
    const long long r = first + i;
    if (r >= rows) break;
    const long long model_row = order[r];
    const float* v = x + model_row * ld;
    // The row's values: x, or the centred y (centre.cuh) with the model row's stored norm.
    const float nx = mean ? norms[model_row] : 0.0f;
    auto value = [&](int j) { return mean ? centred_value(v[j], nx, mean[j]) : v[j]; };
    signed char* out = codes + r * ldg;
    // The projected row's extra value: mu . y, the same in each of its `extra` columns.
    const double mv = mean && extra > 0 ? warp_sum(mean_dot(v, nx, mean, dim, lane)) : 0.0;
    double ss = 0;
    for (int j = lane; j < dim; j += 32) ss += static_cast<double>(value(j)) * value(j);
    const double ny = sqrt(WarpSum(warp_tmp[warp]).Sum(ss) + extra * mv * mv);
    const double n_all = mean ? static_cast<double>(nx) : __shfl_sync(~0u, ny, 0);
    const float s = n_all > 0 ? __double2float_rn(n_all / U) : 1.0f;
    double ee = 0;
    for (int j = lane; j < ldg; j += 32) {
      const bool coded = j < dim || (mean && j < dim + extra);
      const double val = j < dim ? static_cast<double>(value(j)) : coded ? mv : 0.0;
      float c = 0;
      if (coded && n_all > 0)
        c = fminf(fmaxf(j < dim ? rintf(value(j) / s) : static_cast<float>(rint(mv / s)), -127.0f), 127.0f);
      out[j] = static_cast<signed char>(c);
      const double e = val - static_cast<double>(s) * c;  // s c exact in double
      ee += e * e;
    }
    const double e_all = __shfl_sync(~0u, WarpSum(warp_tmp[warp]).Sum(ee), 0);
    if (n_all > 0) {
      const double u = n_all / s;
      u_lo = fmin(u_lo, u), u_hi = fmax(u_hi, u), nu = fmax(nu, sqrt(e_all) / n_all);
      if (mean) rho = fmax(rho, __shfl_sync(~0u, ny, 0) / n_all);
    }
  }
  // Lane 0 of each warp holds its rows' figures (the same in every lane): reduce over the block.
  const double lo = Reduce(tmp).Reduce(lane == 0 ? u_lo : 1e300, [](double a, double b) { return fmin(a, b); });
  __syncthreads();
  const double hi = Reduce(tmp).Reduce(lane == 0 ? u_hi : 0.0, [](double a, double b) { return fmax(a, b); });
  __syncthreads();
  const double nmax = Reduce(tmp).Reduce(lane == 0 ? nu : 0.0, [](double a, double b) { return fmax(a, b); });
  __syncthreads();
  const double rmax = Reduce(tmp).Reduce(lane == 0 ? rho : 0.0, [](double a, double b) { return fmax(a, b); });
  // rho_max: the largest |y| / |x| of the tile's rows (1 for the plain copy, where y = x).
  const float r_up = mean ? up(rmax) : 1.0f;
  if (threadIdx.x == 0)
    tiles[blockIdx.x] = hi > 0 ? make_float4(down(lo), up(hi), up(nmax), r_up) : make_float4(1.0f, 1.0f, 0.0f, 0.0f);
}

__global__ void __launch_bounds__(128)
    tiled_i8_queries_kernel(const float* queries, const float* norms, int dim, int ldg, TiledI8Projection p,
                            signed char* codes, float4* meta) {
  using Max = cub::BlockReduce<float, 128>;
  using Sum = cub::BlockReduce<double, 128>;
  __shared__ typename Max::TempStorage max_tmp;
  __shared__ typename Sum::TempStorage sum_tmp;
  __shared__ float s_shared, w_shared;
  const int b = blockIdx.x;
  const float inv = 1.0f / norms[b];
  const float* q = queries + static_cast<long long>(b) * dim;
  const bool projected = p.mean && p.extra > 0 && p.mean_norm2 > 0;
  // w = q . mu / |mu|^2 (any w keeps q . y = (q - w mu) . y + w mu . y; this one makes q - w mu small).
  if (projected) {
    double d = 0;
    for (int j = threadIdx.x; j < dim; j += 128) d += static_cast<double>(q[j] * inv) * p.mean[j];
    d = Sum(sum_tmp).Sum(d);
    if (threadIdx.x == 0) w_shared = __double2float_rn(d / p.mean_norm2);
    __syncthreads();
  }
  const float w = projected ? w_shared : 0.0f;
  const int extra = projected ? p.extra : 0;
  // The query's values: q_j / |q| in fp32 as normalize_queries_kernel has them, less w mu_j (the
  // codes' input, fp32) whose exact value (double) the error is measured against.
  auto value = [&](int j) { return projected ? fmaf(-w, p.mean[j], q[j] * inv) : q[j] * inv; };
  auto exact = [&](int j) {
    return static_cast<double>(q[j] * inv) - (projected ? static_cast<double>(w) * p.mean[j] : 0.0);
  };
  const double share = extra > 0 ? static_cast<double>(w) / extra : 0.0;  // each extra column's value
  float m = extra > 0 ? fabsf(w) / static_cast<float>(extra) : 0.0f;
  for (int j = threadIdx.x; j < dim; j += 128) m = fmaxf(m, fabsf(value(j)));
  m = Max(max_tmp).Reduce(m, [](float a, float c) { return fmaxf(a, c); });
  if (threadIdx.x == 0) s_shared = m > 0 && m <= 3.0e38f ? m / 127.0f : 0.0f;
  __syncthreads();
  const float s = s_shared;
  double cc = 0, ee = 0;
  for (int j = threadIdx.x; j < ldg; j += 128) {
    float c = 0;
    if (j < dim + extra && s > 0) {
      c = fminf(fmaxf(j < dim ? rintf(value(j) / s) : static_cast<float>(rint(share / s)), -127.0f), 127.0f);
      const double e = (j < dim ? exact(j) : share) - static_cast<double>(s) * c;
      cc += static_cast<double>(c) * c, ee += e * e;
    }
    codes[static_cast<long long>(b) * ldg + j] = static_cast<signed char>(c);
  }
  cc = Sum(sum_tmp).Sum(cc);
  __syncthreads();
  ee = Sum(sum_tmp).Sum(ee);
  // B_q's room: the double arithmetic of the exact values (2^-53 each), the extra columns summing
  // to w only to 2^-53 |w|, and the row's mu . y in double (dim 2^-53 |mu| |y|, dim <= 2^9): all
  // well inside 2^-36 (1 + |w|) a unit of |y| / |x| (which rho_max bounds).
  const double room = projected ? 0x1p-36 * (1.0 + fabs(static_cast<double>(w))) : 0.0;
  if (threadIdx.x == 0)
    meta[b] = s > 0 ? make_float4(s, up(s * sqrt(cc)), up(sqrt(ee) + room), 0.0f) : make_float4(1.0f, 0.0f, 0.0f, 0.0f);
}

}  // namespace distancies
