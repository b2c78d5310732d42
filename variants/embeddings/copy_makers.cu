// The makers of the built-in model copies (model_copies.hpp): the 16-bit and int8 copies, the
// tiled int8 copy, the centre and the centred forms of each.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/embeddings/centre.cuh"
#include "kernels/embeddings/convert_reduced.cuh"
#include "kernels/embeddings/tiled_i8.cuh"
#include "runtime/env_setting.hpp"
#include "runtime/launch.hpp"
#include "variants/embeddings/model_copies.hpp"

namespace distancies {

namespace {
constexpr int kElementThreads = 256;  // the one-thread-per-element kernels below

// A view's stale copy is re-filled in place when its size still fits (no cudaFree: that would
// wait for the whole device, the next chunk's copy included).
DeviceBuffer reuse_or_allocate(DeviceBuffer old, std::size_t bytes, const char* what) {
  if (old.get() && old.bytes() == bytes) return old;
  return DeviceBuffer(bytes, what);
}

template <class T>
T stale_as(std::unique_ptr<DeviceModel::Copy> stale) {
  T* t = dynamic_cast<T*>(stale.get());
  return t ? std::move(*t) : T{};
}

std::size_t row_count(long long rows) { return static_cast<std::size_t>(std::max<long long>(rows, 1)); }

// The centre's mean where the model is centred; an Error where a centred copy is asked of a model
// that is not (the copy it comes after says why).
const float* centred_mean(const DeviceModel& m) {
  const auto* c = dynamic_cast<const ModelCentre*>(m.find_copy(centre_copy_row().name));
  if (!c) throw Error("a centred copy was asked for before the model's centre was prepared");
  if (!c->used) throw Error("the centred copy was asked for an uncentred model: " + c->why);
  return c->mean.as<float>();
}
}  // namespace

// The int8 copy with its row scales, of the rows (mean null) or of the centred rows. Filled in,
// then returned: a throw part-way keeps nothing.
std::unique_ptr<DeviceModel::Copy> quantize_i8(const DeviceModel& m, std::unique_ptr<DeviceModel::Copy> stale,
                                               const float* mean) {
  ReducedCopy old = stale_as<ReducedCopy>(std::move(stale));
  auto fresh = std::make_unique<ReducedCopy>();
  const int rld = storage_leading_dim(Storage::I8, m.dim);
  fresh->data = reuse_or_allocate(std::move(old.data), static_cast<std::size_t>(m.rows) * rld, "the model's int8 copy");
  fresh->scale = reuse_or_allocate(std::move(old.scale), row_count(m.rows) * sizeof(float), "the int8 row scales");
  if (mean)
    fresh->correction =
        reuse_or_allocate(std::move(old.correction), row_count(m.rows) * sizeof(float), "the int8 row corrections");
  if (m.rows > 0) {
    const int warps = 8;
    quantize_i8_kernel<signed char><<<static_cast<unsigned>((m.rows + warps - 1) / warps), warps * 32>>>(
        m.d_vectors(), m.rows, m.dim, m.ld, rld, fresh->data.as<signed char>(), fresh->scale.as<float>(), m.d_norms(),
        mean, mean ? fresh->correction.as<float>() : nullptr);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(0));  // this stream only: not a streamed chunk's copy in flight
  }
  fresh->min_norm = m.norm_range().min_norm;
  fresh->max_norm = m.norm_range().max_norm;
  return fresh;
}

// The 16-bit copy of the rows (mean null) or of the centred rows. Filled in, then returned.
std::unique_ptr<DeviceModel::Copy> convert_16bit(const DeviceModel& m, std::unique_ptr<DeviceModel::Copy> stale,
                                                 Storage s, const float* mean) {
  ReducedCopy old = stale_as<ReducedCopy>(std::move(stale));
  auto fresh = std::make_unique<ReducedCopy>();
  const int rld = reduced_leading_dim(m.dim);
  const long long n = m.rows * rld;
  fresh->data = reuse_or_allocate(std::move(old.data), static_cast<std::size_t>(n) * 2, "the model's 16-bit copy");
  fresh->flag = reuse_or_allocate(std::move(old.flag), sizeof(int), "conversion flag");
  const DeviceBuffer& flag = fresh->flag;
  CUDA_CHECK(cudaMemsetAsync(flag.get(), 0, sizeof(int), 0));
  const unsigned grid = blocks_for(n, kElementThreads);
  if (s == Storage::F16)
    convert_reduced_kernel<__half><<<grid, kElementThreads>>>(
        m.d_vectors(), m.rows, m.dim, m.ld, rld, fresh->data.as<__half>(), flag.as<int>(), m.d_norms(), mean);
  else
    convert_reduced_kernel<__nv_bfloat16><<<grid, kElementThreads>>>(
        m.d_vectors(), m.rows, m.dim, m.ld, rld, fresh->data.as<__nv_bfloat16>(), flag.as<int>(), m.d_norms(), mean);
  CUDA_CHECK_LAUNCH();
  int out = 0;
  CUDA_CHECK(cudaMemcpy(&out, flag.get(), sizeof out, cudaMemcpyDeviceToHost));
  fresh->out_of_range = out != 0;
  fresh->min_norm = m.norm_range().min_norm;
  fresh->max_norm = m.norm_range().max_norm;
  return fresh;
}

// The tiled int8 copy of the rows (mean null) or of the centred rows (projected or not).
std::unique_ptr<DeviceModel::Copy> build_tiled_i8(const DeviceModel& m, std::unique_ptr<DeviceModel::Copy> stale,
                                                  const float* mean, bool projected) {
  TiledI8Copy old = stale_as<TiledI8Copy>(std::move(stale));
  auto fresh = std::make_unique<TiledI8Copy>();  // filled in, then kept: a throw part-way keeps nothing
  fresh->ldg = projected ? tiled_i8::projected_ldg(m.dim) : tiled_i8::plain_ldg(m.dim);
  fresh->extra = projected ? fresh->ldg - m.dim : 0;
  const std::size_t n = row_count(m.rows);
  const std::size_t tiles = (n + tiled_i8::kTileRows - 1) / tiled_i8::kTileRows;
  fresh->codes = reuse_or_allocate(std::move(old.codes), n * fresh->ldg, "the model's tiled int8 copy");
  fresh->order = reuse_or_allocate(std::move(old.order), n * sizeof(int), "the tiled int8 copy's order");
  fresh->tiles = reuse_or_allocate(std::move(old.tiles), tiles * sizeof(float4), "the tiled int8 copy's tiles");
  if (m.rows > 0) {
    if (m.rows > INT32_MAX) throw Error("the tiled int8 copy holds at most 2^31 - 1 rows");
    const int count = static_cast<int>(m.rows);
    DeviceBuffer keys(n * sizeof(float) * 2, "the tiled int8 copy's sort keys");
    DeviceBuffer index(n * sizeof(int), "the tiled int8 copy's sort");
    float* key_in = keys.as<float>();
    float* key_out = key_in + n;
    tiled_i8_keys_kernel<<<blocks_for(m.rows * 32, kElementThreads), kElementThreads>>>(
        m.d_vectors(), m.rows, m.dim, m.ld, m.d_norms(), mean, fresh->extra, key_in, index.as<int>());
    CUDA_CHECK_LAUNCH();
    std::size_t temp_bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, key_in, key_out, index.as<int>(),
                                               fresh->order.as<int>(), count));
    DeviceBuffer temp(std::max<std::size_t>(temp_bytes, 1), "the tiled int8 copy's sort scratch");
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, key_in, key_out, index.as<int>(),
                                               fresh->order.as<int>(), count));
    tiled_i8_codes_kernel<<<static_cast<unsigned>(tiles), tiled_i8::kThreads>>>(
        m.d_vectors(), m.rows, m.dim, m.ld, m.d_norms(), mean, fresh->extra, fresh->order.as<int>(), key_out,
        fresh->ldg, fresh->codes.as<signed char>(), fresh->tiles.as<float4>());
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(0));  // before the scratch goes
  }
  return fresh;
}

namespace {
// DISTANCIES_CENTRE or DISTANCIES_PROJECT: "on", "off" or "auto" (unset).
std::string setting_of(const char* name) { return env_setting(name, {"on", "off", "auto"}, "auto"); }

// mu in double, then fp32 (any fixed mu keeps the identity exact; this one makes y small), and
// rho >= |y| / |x| over the rows; whether some row is zero.
bool measure_centre(const DeviceModel& m, ModelCentre& c) {
  DeviceBuffer sum(static_cast<std::size_t>(m.dim) * sizeof(double) + sizeof(unsigned long long), "the model's mean");
  CUDA_CHECK(cudaMemset(sum.get(), 0, sum.bytes()));
  auto* count = reinterpret_cast<unsigned long long*>(sum.as<double>() + m.dim);
  constexpr long long kRowsPerBlock = 1024;
  centre_sum_kernel<<<static_cast<unsigned>(ceil_div(static_cast<long long>(m.rows), kRowsPerBlock)), 256>>>(
      m.d_vectors(), m.d_norms(), m.rows, m.dim, m.ld, kRowsPerBlock, sum.as<double>(), count);
  CUDA_CHECK_LAUNCH();
  std::vector<double> s(static_cast<std::size_t>(m.dim));
  unsigned long long used = 0;
  CUDA_CHECK(cudaMemcpy(s.data(), sum.get(), s.size() * sizeof(double), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&used, count, sizeof used, cudaMemcpyDeviceToHost));
  std::vector<float> mu(static_cast<std::size_t>(m.dim));
  double norm2 = 0;
  for (int j = 0; j < m.dim; ++j) {
    mu[j] = static_cast<float>(s[j] / static_cast<double>(used));
    norm2 += static_cast<double>(mu[j]) * mu[j];
  }
  c.mean_norm2 = static_cast<float>(norm2);
  CUDA_CHECK(cudaMemcpy(c.mean.get(), mu.data(), mu.size() * sizeof(float), cudaMemcpyHostToDevice));
  c.mean_host = mu;
  DeviceBuffer out(2 * sizeof(unsigned), "the centred rows' rho");
  CUDA_CHECK(cudaMemset(out.get(), 0, out.bytes()));
  centre_rho_kernel<<<blocks_for(m.rows * 32, 256), 256>>>(m.d_vectors(), m.d_norms(), c.mean.as<float>(), m.rows,
                                                           m.dim, m.ld, out.as<unsigned>(),
                                                           reinterpret_cast<int*>(out.as<unsigned>() + 1));
  CUDA_CHECK_LAUNCH();
  unsigned got[2];
  CUDA_CHECK(cudaMemcpy(got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
  std::memcpy(&c.rho, &got[0], sizeof(float));
  return got[1] != 0;
}
}  // namespace

// The centre, and whether the centred copies are used (the policies above, the model's rows).
std::unique_ptr<DeviceModel::Copy> make_centre(const DeviceModel& m, std::unique_ptr<DeviceModel::Copy>) {
  auto c = std::make_unique<ModelCentre>();
  const std::string setting = setting_of("DISTANCIES_CENTRE");
  const std::string project = setting_of("DISTANCIES_PROJECT");
  const NormRange& range = m.norm_range();
  c->mean = DeviceBuffer(static_cast<std::size_t>(std::max(m.dim, 1)) * sizeof(float), "the model's mean row");
  CUDA_CHECK(cudaMemset(c->mean.get(), 0, static_cast<std::size_t>(std::max(m.dim, 1)) * sizeof(float)));
  if (setting == "off") {
    c->why = "DISTANCIES_CENTRE=off";
  } else if (m.is_view()) {
    c->why = "a streamed chunk's rows change under it";
  } else if (m.rows == 0 || !range.finite || !(range.max_norm > 0)) {
    c->why = "no finite non-zero rows to centre";
  } else {
    const bool zero_rows = measure_centre(m, *c);
    char figures[96];
    std::snprintf(figures, sizeof figures, "|mu|^2 = %.3g, rho = %.3g", static_cast<double>(c->mean_norm2),
                  static_cast<double>(c->rho));
    if (zero_rows) {
      // A zero row scores 0 on every path, which the centred copies cannot say (its y has no
      // norm to carry -q . mu): such a model keeps the plain copies.
      c->why = std::string("the model has zero rows (") + figures + ")";
    } else if (!(c->rho < 2.5f)) {
      c->why = std::string("the centred rows are not smaller (") + figures + ")";
    } else if (setting == "auto" && c->mean_norm2 < kCentreFrom) {
      c->why = std::string("no common direction to take out (") + figures + ")";
    } else {
      c->used = true;
      c->projected = project == "on" || (project == "auto" && c->mean_norm2 >= kProjectFrom);
      c->why = std::string(c->projected ? "centred and projected (" : "centred (") + figures + ")";
    }
  }
  return c;
}

namespace {
std::size_t reduced_bytes(long long rows, int dim, Storage s, bool centred) {
  const std::size_t n = row_count(rows);
  if (s == Storage::I8)
    return static_cast<std::size_t>(rows) * storage_leading_dim(Storage::I8, dim) +
           n * sizeof(float) * (centred ? 2 : 1);
  return static_cast<std::size_t>(rows) * reduced_leading_dim(dim) * 2;
}

std::size_t tiled_bytes(long long rows, int ldg) {
  const std::size_t n = row_count(rows);
  return n * ldg + n * sizeof(int) + (n + tiled_i8::kTileRows - 1) / tiled_i8::kTileRows * sizeof(float4);
}

template <Storage S, bool Centred>
std::unique_ptr<DeviceModel::Copy> make_reduced(const DeviceModel& m, std::unique_ptr<DeviceModel::Copy> stale) {
  const float* mean = Centred ? centred_mean(m) : nullptr;
  return S == Storage::I8 ? quantize_i8(m, std::move(stale), mean) : convert_16bit(m, std::move(stale), S, mean);
}

template <bool Centred>
std::unique_ptr<DeviceModel::Copy> make_tiled(const DeviceModel& m, std::unique_ptr<DeviceModel::Copy> stale) {
  if (!Centred) return build_tiled_i8(m, std::move(stale), nullptr, false);
  const float* mean = centred_mean(m);
  const auto& c = dynamic_cast<const ModelCentre&>(*m.find_copy(centre_copy_row().name));
  return build_tiled_i8(m, std::move(stale), mean, c.projected);
}

// Every centred copy: the centre must be used (make_centre says why not).
std::optional<Refusal> needs_centre(const DeviceModel& m) {
  const auto* c = dynamic_cast<const ModelCentre*>(m.find_copy(centre_copy_row().name));
  if (c && !c->used) return Refusal{"the model is not centred: " + c->why};
  return std::nullopt;
}

// A centred copy: made after the centre, refused where the model is not centred.
ModelCopyRow centred(const ModelCopyRow& r) { return r.comes_after("centre").refuses(needs_centre); }
}  // namespace

std::vector<ModelCopyRow> builtin_model_copies() {
  using R = ModelCopyRow;
  const char* kBeyond = "beyond the study";
  auto bytes16 = [](long long r, int d) { return reduced_bytes(r, d, Storage::F16, false); };
  auto bytes8 = [](long long r, int d) { return reduced_bytes(r, d, Storage::I8, false); };
  auto bytes8c = [](long long r, int d) { return reduced_bytes(r, d, Storage::I8, true); };
  return {
      R{"f16", "fp16 copy of the rows (the V4 scans' 16-bit copy)", "V4"}
          .holds(bytes16)
          .made_by(make_reduced<Storage::F16, false>)
          .centres_as("centred_f16"),
      R{"bf16", "bf16 copy of the rows", kBeyond}
          .holds(bytes16)
          .made_by(make_reduced<Storage::BF16, false>)
          .centres_as("centred_bf16"),
      R{"i8", "int8 codes of the rows with a scale a row", kBeyond}
          .holds(bytes8)
          .made_by(make_reduced<Storage::I8, false>)
          .centres_as("centred_i8"),
      R{"tiled_i8", "the batched int8 walk's copy: rows sorted by code norm, one |x| / s a 64-row tile", kBeyond}
          .holds([](long long r, int d) { return tiled_bytes(r, tiled_i8::plain_ldg(d)); })
          .made_by(make_tiled<false>)
          .centres_as("centred_tiled_i8"),
      R{"centre", "the mean of the normalised rows and whether the centred copies are used (DISTANCIES_CENTRE)",
        kBeyond}
          .holds([](long long, int d) { return static_cast<std::size_t>(std::max(d, 1)) * sizeof(float); })
          .made_by(make_centre),
      centred(R{"centred_f16", "fp16 copy of the centred rows y = x - |x| mu", kBeyond}.holds(bytes16).made_by(
          make_reduced<Storage::F16, true>)),
      centred(R{"centred_bf16", "bf16 copy of the centred rows", kBeyond}.holds(bytes16).made_by(
          make_reduced<Storage::BF16, true>)),
      centred(R{"centred_i8", "int8 codes of the centred rows, with each row's correction mu . (y - s codes)", kBeyond}
                  .holds(bytes8c)
                  .made_by(make_reduced<Storage::I8, true>)),
      centred(
          R{"centred_tiled_i8", "the tiled int8 copy of the centred rows (projected where the mean is long)", kBeyond}
              .holds([](long long r, int d) { return tiled_bytes(r, tiled_i8::projected_ldg(d)); })
              .made_by(make_tiled<true>)),
  };
}

}  // namespace distancies
