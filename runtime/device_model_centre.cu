// The device model's centred copies (device_model.hpp, kernels/embeddings/centre.cuh).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/embeddings/centre.cuh"
#include "runtime/device_model.hpp"
#include "runtime/launch.hpp"

namespace distancies {

namespace {
// DISTANCIES_CENTRE or DISTANCIES_PROJECT: "on", "off" or "auto" (unset).
std::string setting_of(const char* name) {
  const char* env = std::getenv(name);
  const std::string v = env ? env : "auto";
  if (v != "on" && v != "off" && v != "auto")
    throw Error(std::string(name) + " must be on, off or auto, not '" + v + "'");
  return v;
}
}  // namespace

const DeviceModel::Centre& DeviceModel::centre() const {
  if (have_centre_) return centre_;
  Centre c;
  const std::string setting = setting_of("DISTANCIES_CENTRE");
  const std::string project = setting_of("DISTANCIES_PROJECT");
  const NormRange& range = norm_range();
  c.mean = DeviceBuffer(static_cast<std::size_t>(std::max(dim, 1)) * sizeof(float), "the model's mean row");
  CUDA_CHECK(cudaMemset(c.mean.get(), 0, static_cast<std::size_t>(std::max(dim, 1)) * sizeof(float)));
  if (setting == "off") {
    c.why = "DISTANCIES_CENTRE=off";
  } else if (is_view_) {
    c.why = "a streamed chunk's rows change under it";
  } else if (rows == 0 || !range.finite || !(range.max_norm > 0)) {
    c.why = "no finite non-zero rows to centre";
  } else {
    // mu in double, then fp32 (any fixed mu keeps the identity exact; this one makes y small).
    DeviceBuffer sum(static_cast<std::size_t>(dim) * sizeof(double) + sizeof(unsigned long long), "the model's mean");
    CUDA_CHECK(cudaMemset(sum.get(), 0, sum.bytes()));
    auto* count = reinterpret_cast<unsigned long long*>(sum.as<double>() + dim);
    constexpr long long kRowsPerBlock = 1024;
    centre_sum_kernel<<<static_cast<unsigned>(ceil_div(static_cast<long long>(rows), kRowsPerBlock)), 256>>>(
        d_vectors(), d_norms(), rows, dim, ld, kRowsPerBlock, sum.as<double>(), count);
    CUDA_CHECK_LAUNCH();
    std::vector<double> s(static_cast<std::size_t>(dim));
    unsigned long long used = 0;
    CUDA_CHECK(cudaMemcpy(s.data(), sum.get(), s.size() * sizeof(double), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&used, count, sizeof used, cudaMemcpyDeviceToHost));
    std::vector<float> mu(static_cast<std::size_t>(dim));
    double norm2 = 0;
    for (int j = 0; j < dim; ++j) {
      mu[j] = static_cast<float>(s[j] / static_cast<double>(used));
      norm2 += static_cast<double>(mu[j]) * mu[j];
    }
    c.mean_norm2 = static_cast<float>(norm2);
    CUDA_CHECK(cudaMemcpy(c.mean.get(), mu.data(), mu.size() * sizeof(float), cudaMemcpyHostToDevice));
    c.mean_host = mu;
    DeviceBuffer out(2 * sizeof(unsigned), "the centred rows' rho");
    CUDA_CHECK(cudaMemset(out.get(), 0, out.bytes()));
    centre_rho_kernel<<<blocks_for(rows * 32, 256), 256>>>(d_vectors(), d_norms(), c.mean.as<float>(), rows, dim, ld,
                                                           out.as<unsigned>(),
                                                           reinterpret_cast<int*>(out.as<unsigned>() + 1));
    CUDA_CHECK_LAUNCH();
    unsigned got[2];
    CUDA_CHECK(cudaMemcpy(got, out.get(), sizeof got, cudaMemcpyDeviceToHost));
    std::memcpy(&c.rho, &got[0], sizeof(float));
    const bool zero_rows = got[1] != 0;
    char figures[96];
    std::snprintf(figures, sizeof figures, "|mu|^2 = %.3g, rho = %.3g", static_cast<double>(c.mean_norm2),
                  static_cast<double>(c.rho));
    if (zero_rows) {
      // A zero row scores 0 on every path, which the centred copies cannot say (its y has no
      // norm to carry -q . mu): such a model keeps the plain copies.
      c.why = std::string("the model has zero rows (") + figures + ")";
    } else if (!(c.rho < 2.5f)) {
      c.why = std::string("the centred rows are not smaller (") + figures + ")";
    } else if (setting == "auto" && c.mean_norm2 < kCentreFrom) {
      c.why = std::string("no common direction to take out (") + figures + ")";
    } else {
      c.used = true;
      c.projected = project == "on" || (project == "auto" && c.mean_norm2 >= kProjectFrom);
      c.why = std::string(c.projected ? "centred and projected (" : "centred (") + figures + ")";
    }
  }
  centre_ = std::move(c);
  have_centre_ = true;
  return centre_;
}

const float* DeviceModel::centred_mean() const {
  const Centre& c = centre();
  if (!c.used) throw Error("the centred copy was asked for an uncentred model: " + c.why);
  return c.mean.as<float>();
}

const DeviceModel::Reduced& DeviceModel::centred(Storage s) const {
  if (s == Storage::F32) throw Error("centred(): f32 is the model itself");
  Reduced& r = s == Storage::F16 ? centred_f16_ : s == Storage::BF16 ? centred_bf16_ : centred_i8_;
  bool& have = s == Storage::F16 ? have_centred_f16_ : s == Storage::BF16 ? have_centred_bf16_ : have_centred_i8_;
  if (have) return r;
  const float* mean = centred_mean();
  r = s == Storage::I8 ? quantize_i8(std::move(r), mean) : convert_16bit(s, std::move(r), mean);
  have = true;
  return r;
}

const DeviceModel::TiledI8& DeviceModel::centred_tiled_i8() const {
  if (have_centred_tiled_i8_) return centred_tiled_i8_;
  build_tiled_i8(centred_tiled_i8_, centred_mean(), centre().projected);
  have_centred_tiled_i8_ = true;
  return centred_tiled_i8_;
}

}  // namespace distancies
