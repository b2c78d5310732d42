// The matmul study's fixtures (docs/matmul.md): matmul/<variant>/M:m/N:n/K:k for every registered
// variant at the study's 512^3 and at 4096^3 (the full tile and register sweeps), the best of
// the seed's kernels, the kernels beyond the seed and the cuBLAS, cuBLASLt (the fastest of the
// heuristic's candidates) and CUTLASS anchors at every shape, and the study's single-core CPU
// loop at 512^3. Counters: TFLOP/s, the fraction of cuBLAS's speed at the same shape and
// precision and of the card's peak for that precision, and the kernel's registers, spills,
// shared memory, threads and occupancy.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/matmul/cublas_matmul.hpp"
#include "harness/matmul/cublaslt_matmul.hpp"
#include "harness/matmul/cutlass_matmul.hpp"
#include "harness/matmul/half_operands.hpp"
#include "harness/matmul/matmul_host.hpp"
#include "runtime/cuda_check.hpp"
#include "variants/matmul/registry.hpp"

namespace distancies::bench {
namespace {

struct Shape {
  int m, n, k;
  FixtureName name(std::string_view row) const {
    return FixtureName("matmul", row).axis("M", m).axis("N", n).axis("K", k);
  }
  double flops() const { return 2.0 * m * n * k; }
};
const Shape kStudy{512, 512, 512};
const Shape kSweep{4096, 4096, 4096};
// Every shape the anchors and the best seed kernels run at: square sizes, and the batched
// search's shape (1,024 queries x 300 against a 131,072-row tile of the model).
const Shape kShapes[] = {{512, 512, 512},    {1024, 1024, 1024},    {4096, 4096, 4096},
                         {8192, 8192, 8192}, {16384, 16384, 16384}, {1024, 131072, 300}};
// (Plus every row of the tuned and warpgroup kinds, however many are registered.)
const char* kEveryShape[] = {"register_tile_4x4", "register_tile_8x8",   "register_length_8",  "shared_tile_4x4",
                             "shared_tile_8x8",   "warp_tiled_sgemm",    "mma_f16_128x128",    "mma_f16_128x256",
                             "mma_f16_256x128",   "mma_f16_128x256_k64", "mma_f16_256x128_k64"};

// Operands of the current shape, kept while fixtures of that shape run (registration order).
struct Operands {
  Shape s{};
  DeviceBuffer a, b, c;
  HalfOperands halves;  // made once per shape, for the FP16 rows and anchors (untimed)
  MatmulArgs args() const { return {a.as<float>(), b.as<float>(), c.as<float>(), s.m, s.n, s.k}; }
  MatmulArgs args(MatmulPrecision p) const { return p == MatmulPrecision::F16 ? halves.bind(args()) : args(); }
};
Operands& operands(const Shape& s) {
  static Operands* o = nullptr;  // never destroyed: no device frees after the runtime shuts down
  if (!o || o->s.m != s.m || o->s.n != s.n || o->s.k != s.k) {
    delete o;
    o = nullptr;
    auto made = std::make_unique<Operands>();
    made->s = s;
    made->a = DeviceBuffer(std::size_t(s.m) * s.k * 4, "matmul A");
    made->b = DeviceBuffer(std::size_t(s.k) * s.n * 4, "matmul B");
    made->c = DeviceBuffer(std::size_t(s.m) * s.n * 4, "matmul C");
    // Random operands (uniform in [-1, 1)), made on the host in pieces of at most 64 Mi floats.
    for (auto [buf, rows, cols, seed] : {std::tuple{&made->a, s.m, s.k, 1}, std::tuple{&made->b, s.k, s.n, 2}}) {
      const long long total = static_cast<long long>(rows) * cols;
      const long long piece = std::min<long long>(total, 64ll << 20);
      const auto v = random_matrix(1, static_cast<int>(piece), static_cast<std::uint64_t>(seed));
      for (long long at = 0; at < total; at += piece)
        CUDA_CHECK(
            cudaMemcpy(buf->as<float>() + at, v.data(), std::min(piece, total - at) * 4, cudaMemcpyHostToDevice));
    }
    made->halves.make(made->args(), nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    o = made.release();
  }
  return *o;
}

CublasMatmul& blas() {
  static CublasMatmul* b = new CublasMatmul;  // never destroyed, as above
  return *b;
}

// Peak FLOP per clock per SM on sm_90 (H100): FP32 128 lanes x 2, TF32 and FP16 dense tensor
// cores 2,048 and 4,096; times the SM count and the maximum SM clock. 0 elsewhere (no figure).
double peak_tflops(MatmulPrecision p) {
  int dev = 0, major = 0, sms = 0, khz = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
  if (major != 9) return 0;
  const double per_clock = p == MatmulPrecision::F32 ? 256 : p == MatmulPrecision::TF32 ? 2048 : 4096;
  return per_clock * sms * khz * 1e3 / 1e12;
}

CublasMode cublas_mode_for(MatmulPrecision p) {
  return p == MatmulPrecision::F32    ? CublasMode::Sgemm
         : p == MatmulPrecision::TF32 ? CublasMode::Tf32
                                      : CublasMode::F16;
}

// cuBLAS's median at a shape and precision, measured once (events, after warm-up) for the
// fraction counter.
double cublas_ms(const Shape& s, MatmulPrecision p) {
  static std::map<std::tuple<int, int, int, int>, double> cache;
  const auto key = std::make_tuple(s.m, s.n, s.k, static_cast<int>(p));
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const Operands& o = operands(s);
  const CublasMode mode = cublas_mode_for(p);
  blas().prepare(o.args(), mode, nullptr);
  return cache[key] = reference_ms([&](cudaStream_t st) { blas().run(o.args(), mode, st); }, 5, 2, Pick::Median);
}

void rate_counters(benchmark::State& st, const Shape& s, double ms, MatmulPrecision p, int output_bits = 32) {
  st.counters["M"] = s.m;
  st.counters["N"] = s.n;
  st.counters["K"] = s.k;
  st.counters["tflops"] = s.flops() / (ms * 1e9);
  st.counters["input_bits"] = p == MatmulPrecision::F16 ? 16 : p == MatmulPrecision::TF32 ? 19 : 32;
  st.counters["output_bits"] = output_bits;  // C's element: fp32 everywhere but cublaslt_f16_out16_best
  const double peak = peak_tflops(p);
  if (peak > 0) st.counters["peak_fraction"] = s.flops() / (ms * 1e9) / peak;
  st.counters["cublas_fraction"] = cublas_ms(s, p) / ms;  // of cuBLAS's speed at the same precision
}

// What a product must read at least: A and B once (2 bytes an element in FP16). C's writes are
// not counted: they may end the sample still in the L2 (docs/methodology.md, the refusal), and
// the output's width changes what is written, not what must be read.
double min_bytes(const Shape& s, MatmulPrecision p, int /*output_bits*/ = 32) {
  const double in = p == MatmulPrecision::F16 ? 2 : 4;
  return in * (double(s.m) * s.k + double(s.k) * s.n);
}

void variant_fixture(benchmark::State& st, const MatmulVariant* v, Shape s) {
  if (const auto no = matmul_variant_refusal(*v)) {  // sm_90a rows off compute capability 9.0
    st.SkipWithError(no->why.c_str());
    return;
  }
  const Operands& o = operands(s);
  const MatmulArgs args = o.args(v->precision);
  Means m;
  ExecOptions opt;
  opt.warmups = 1;  // the slowest tiles take a second a call at 4096^3
  opt.min_bytes = min_bytes(s, v->precision);
  opt.on_sample = [&](double ms) { m.add("kernel_ms", ms); };
  if (!exec(
          st, [&](cudaStream_t str) { v->launch(args, str); }, opt))
    return;
  m.publish(st);
  rate_counters(st, s, m.mean("kernel_ms"), v->precision);
  const MatmulResources r = matmul_resources(*v);
  st.counters["registers"] = r.registers;
  st.counters["spill_bytes"] = r.local_bytes;
  st.counters["shared_bytes"] = r.static_shared_bytes + r.dynamic_shared_bytes;
  st.counters["block_threads"] = v->threads;  // "threads" is Google Benchmark's own field
  st.counters["blocks_per_sm"] = r.blocks_per_sm;
  st.counters["occupancy"] = r.occupancy;
  st.counters["tile_y"] = v->tile_y;
  st.counters["tile_x"] = v->tile_x;
  st.counters["length"] = v->length;
  st.counters["register_inputs"] = v->inputs_in_registers();
}

void cublas_fixture(benchmark::State& st, CublasMode mode, Shape s) {
  const Operands& o = operands(s);
  blas().prepare(o.args(), mode, nullptr);  // FP16 copies of the operands, untimed
  CUDA_CHECK(cudaDeviceSynchronize());
  const MatmulPrecision p = mode == CublasMode::Sgemm  ? MatmulPrecision::F32
                            : mode == CublasMode::Tf32 ? MatmulPrecision::TF32
                                                       : MatmulPrecision::F16;
  Means m;
  ExecOptions opt;
  opt.warmups = 2;
  opt.min_bytes = min_bytes(s, p);  // the operands it reads (FP16: the untimed copies)
  opt.on_sample = [&](double ms) { m.add("kernel_ms", ms); };
  if (!exec(
          st, [&](cudaStream_t str) { blas().run(o.args(), mode, str); }, opt))
    return;
  m.publish(st);
  rate_counters(st, s, m.mean("kernel_ms"), p);
}

// cuBLASLt at its best: the heuristic's top candidates timed once at set-up (untimed here), the
// fastest timed by the engine. Counters say which algorithm won and what the others took.
void cublaslt_fixture(benchmark::State& st, CublasLtMode mode, Shape s) {
  static CublasLtBest* lt[3] = {};  // one a mode, never destroyed (as blas()); re-tuned when the operands change
  static MatmulArgs tuned_for[3] = {};
  const int i = static_cast<int>(mode);
  if (!lt[i]) lt[i] = new CublasLtBest;
  const MatmulArgs args = operands(s).args();
  const MatmulArgs& t = tuned_for[i];
  if (t.a != args.a || t.b != args.b || t.m != args.m || t.n != args.n || t.k != args.k) {
    tuned_for[i] = MatmulArgs{};
    lt[i]->prepare(args, mode, nullptr);
    tuned_for[i] = args;
  }
  const MatmulPrecision p = cublaslt_precision(mode);
  Means m;
  ExecOptions opt;
  opt.warmups = 2;
  opt.min_bytes = min_bytes(s, p, cublaslt_output_bits(mode));
  opt.on_sample = [&](double ms) { m.add("kernel_ms", ms); };
  if (!exec(
          st, [&](cudaStream_t str) { lt[i]->run(args, str); }, opt))
    return;
  m.publish(st);
  rate_counters(st, s, m.mean("kernel_ms"), p, cublaslt_output_bits(mode));
  const CublasLtChoice& c = lt[i]->choice();
  parameters(st, {{"algo_rank", c.rank},
                  {"algo_id", c.algo_id},
                  {"algo_tile_id", c.tile_id},
                  {"algo_stages_id", c.stages_id},
                  {"algo_splitk", c.splitk},
                  {"algo_cluster_id", c.cluster_id},
                  {"algo_candidates", c.candidates},
                  {"k_run", c.k_run},
                  {"workspace_mib", double(c.workspace_used) / (1 << 20)},
                  {"setup_best_ms", c.ms},
                  {"setup_first_choice_ms", c.first_choice_ms},
                  {"setup_best_exact_k_ms", c.best_exact_k_ms},
                  {"setup_best_padded_k_ms", c.best_padded_k_ms}});
}

void cutlass_fixture(benchmark::State& st, CutlassMode mode, Shape s) {
  if (!cutlass_available()) {
    st.SkipWithError("built without the CUTLASS headers (pip install -r scripts/requirements.txt, reconfigure)");
    return;
  }
  const Operands& o = operands(s);
  const MatmulPrecision p = cutlass_precision(mode);
  const MatmulArgs args = o.args(p);
  Means m;
  ExecOptions opt;
  opt.warmups = 2;
  opt.min_bytes = min_bytes(s, p);
  opt.on_sample = [&](double ms) { m.add("kernel_ms", ms); };
  if (!exec(
          st, [&](cudaStream_t str) { cutlass_matmul(args, mode, str); }, opt))
    return;
  m.publish(st);
  rate_counters(st, s, m.mean("kernel_ms"), p);
}

// The study's CPU baseline: one core, three loops, 512^3 (host wall clock).
void cpu_fixture(benchmark::State& st) {
  const Shape s = kStudy;
  const auto a = random_matrix(s.m, s.k, 1), b = random_matrix(s.k, s.n, 2);
  std::vector<float> c(std::size_t(s.m) * s.n);
  Means m;
  ExecOptions opt;
  opt.warmups = 0;
  opt.fixed_samples = true;
  opt.on_sample = [&](double ms) { m.add("cpu_ms", ms); };
  const bool ok = exec_host(
      st,
      [&] {
        cpu_matmul(a.data(), b.data(), c.data(), s.m, s.n, s.k);
        benchmark::DoNotOptimize(c.data());
      },
      opt);
  if (!ok) return;
  m.publish(st);
  st.counters["M"] = s.m;
  st.counters["N"] = s.n;
  st.counters["K"] = s.k;
  st.counters["tflops"] = s.flops() / (m.mean("cpu_ms") * 1e9);
}

constexpr double kMinSeconds = 0.05;

}  // namespace

// The study's registrar (cmake/studies.cmake): every fixture needs the GPU.
void register_matmul_fixtures(bool gpu) {
  if (!gpu) return;
  timed(add(kStudy.name("cpu_single_core"), cpu_fixture))->Iterations(2);
  for (const Shape& s : kShapes) {
    for (CublasMode mode : {CublasMode::Sgemm, CublasMode::Tf32, CublasMode::F16})
      min_time(timed(add(s.name(cublas_mode_name(mode)), cublas_fixture, mode, s)), kMinSeconds);
    for (CublasLtMode mode : {CublasLtMode::F16, CublasLtMode::F16OutF16, CublasLtMode::Tf32})
      min_time(timed(add(s.name(cublaslt_mode_name(mode)), cublaslt_fixture, mode, s)), kMinSeconds);
    for (CutlassMode mode : {CutlassMode::SimtF32, CutlassMode::F16})
      min_time(timed(add(s.name(cutlass_mode_name(mode)), cutlass_fixture, mode, s)), kMinSeconds);
    const bool sweep = (s.m == kStudy.m && s.n == kStudy.n && s.k == kStudy.k) ||
                       (s.m == kSweep.m && s.n == kSweep.n && s.k == kSweep.k);
    for (const MatmulVariant& v : matmul_variants()) {
      // The tuned SIMT and warpgroup rows, however many are registered, run at every shape.
      const bool every = v.kind == MatmulKind::TunedWarpTile || v.kind == MatmulKind::Warpgroup ||
                         std::find_if(std::begin(kEveryShape), std::end(kEveryShape),
                                      [&](const char* n) { return std::string(n) == v.name; }) != std::end(kEveryShape);
      // The naive and three-loop kernels stop at 4096^3 (16384^3 takes them tens of seconds a call).
      const bool seed_small =
          (v.kind == MatmulKind::Naive || v.kind == MatmulKind::ThreeLoop) && s.m <= 4096 && s.n <= 4096 && s.k == s.m;
      if (sweep || every || seed_small) min_time(timed(add(s.name(v.name), variant_fixture, &v, s)), kMinSeconds);
    }
  }
}

}  // namespace distancies::bench
