// Batched pipelines: batch/<pipeline>/batch:B end to end, batch_gemm/<pipeline>/batch:B (the
// GEMM tiles alone, for the breakdown), batch_tile/<pipeline>/batch:1024/tile:T (the tile
// size the policy picks, checked against its neighbours) and batch_auto/batch:B (what
// `--variant auto` picks, labelled with its choice). Queries are model rows.
#include <algorithm>
#include <string>
#include <vector>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/measure.hpp"
#include "harness/embeddings/batch_search.hpp"
#include "harness/embeddings/data_probe.hpp"
#include "variants/embeddings/auto_plan.hpp"
#include "variants/embeddings/batch_scans.hpp"

namespace distancies::bench {
namespace {

// Powers of two: the `auto` planner's table interpolates between them (scripts/codegen/auto_policy.py).
const int kBatches[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
const int kGemmBatches[] = {128, 1024, 8192};
const int kTiles[] = {16384, 32768, 65536, 131072, 262144};
constexpr int kLoopMaxBatch = 1024;   // one-query loops beyond this only multiply
constexpr int kLoopDenseBatch = 128;  // and between this and kLoopMaxBatch only the largest is run

// Query b of a batch: the vector of row (b * 104729) mod rows (peers use the same rule).
RowQueries batch_queries(int batch) { return model_rows_as_queries(*bench_state().device, batch); }

// DISTANCIES_BATCH_TRACE=on: the last batch's certificates (BatchSearcher::last_trace) as counters:
// how many queries the certificate passed (by its margin, or with every row seen) and how many it
// did not; the median candidate count of each kind (K: the candidates re-ranked); the median margin
// k-th exact - (last key + bound) of each (negative where it failed), and the bound.

void publish_trace(benchmark::State& st, const std::vector<BatchSearcher::CertificateTrace>& t, int K) {
  if (t.empty()) return;
  std::vector<double> counts[2], margins[2];  // [0]: certified by the margin, [1]: not certified
  int all_seen = 0;
  for (const auto& q : t) {
    if (q.all_rows_seen) {
      ++all_seen;
      continue;
    }
    const double margin = double(q.kth_exact) - (double(q.last_key) + double(q.bound));
    const int failed = q.kth_exact > q.last_key + q.bound ? 0 : 1;
    counts[failed].push_back(double(q.candidates));
    margins[failed].push_back(margin);
  }
  st.counters["trace_K"] = K;
  st.counters["trace_bound"] = t.front().bound;
  st.counters["trace_certified_all_seen"] = all_seen;
  const char* kind[2] = {"certified", "uncertified"};
  for (int f = 0; f < 2; ++f) {
    const std::string p = std::string("trace_") + kind[f];
    st.counters[p] = double(counts[f].size());
    st.counters[p + "_candidates_median"] = median_of(counts[f]);
    st.counters[p + "_candidates_max"] =
        counts[f].empty() ? 0.0 : *std::max_element(counts[f].begin(), counts[f].end());
    st.counters[p + "_margin_median"] = median_of(margins[f]);
  }
}

// gemm_only: time the GEMM tiles without the selection; tile 0: the policy's.
void batch_fixture(benchmark::State& st, const BatchPipeline* p, int batch, bool gemm_only, int tile) {
  const BenchState& s = bench_state();
  BatchSearcher::Options so;
  so.gemm_only = gemm_only;
  so.tile_rows = tile;
  BatchSearcher searcher(*s.device, so);
  const RowQueries q = batch_queries(batch);
  const int k = s.config.k;
  Breakdown bd;
  Means m;
  ExecOptions o;
  o.warmups = 1;  // one batch: the 16-bit copies and the workspace are made on it
  // At least the model once, in the precision the scan reads (the int8 scan: its int8 copy; its
  // fp16 sample and refine read a part of the fp16 copy, not counted).
  o.min_bytes = double(s.host.rows) * s.host.dim * read_element_bytes(*p);
  o.on_sample = [&](double ms) {
    for (const auto& stage : bd.stages) m.add(stage.name + "_ms", stage.ms);
    m.add("kernel_ms", bd.kernel_ms());
    m.add("transfer_ms", bd.transfer_ms());
    m.add("overhead_ms", bd.overhead_ms());
    m.add("total_ms", ms);
    m.add("wall_ms", bd.wall_ms);
    m.add("queries_per_s", batch / (ms / 1e3));
    m.add("distances_per_ms", double(batch) * double(s.device->rows) / ms);
    m.add("fallbacks", searcher.last_fallbacks());
    m.add("widened", searcher.last_widened());
    m.add("sub_batch", searcher.last_sub_batch());
    m.add("host_setup_ms", searcher.last_host().setup_ms);
    m.add("host_staging_ms", searcher.last_host().staging_ms);
    m.add("host_answers_ms", searcher.last_host().answers_ms);
  };
  auto work = [&](cudaStream_t) {
    bd = Breakdown{};
    searcher.search(*p, q.q.data(), q.norms.data(), batch, k, &bd);
    return double(gemm_only ? bd.stage_ms("scan") : bd.total_ms);
  };
  if (!exec_timed(st, work, o)) return;
  m.publish(st);
  publish_trace(st, searcher.last_trace(), BatchPolicy::candidates(k));
  parameters(st, {{"batch", double(batch)},
                  {"k", double(k)},
                  {"rows", double(s.host.rows)},
                  {"dim", double(s.host.dim)},
                  {"tile_rows", double(tile > 0 ? tile : BatchPolicy::tile_rows(batch))}});
  if (gemm_only)  // the tensor cores' rate: 2 * B * rows * D flops per batch
    st.counters["tflops"] = 2.0 * batch * double(s.device->rows) * s.device->dim / (m.mean("total_ms") * 1e9);
}

// What `--variant auto` runs for B queries with the 16-bit copy made (as it is in every fixture
// after the warm-up); the label names the choice, so that `python3 -m scripts.codegen.auto_policy --check` can
// hold it against the best pipeline of the same run; counters `predicted_ms:<pipeline>` say what
// it predicted for each pipeline it priced.
// The data's redo rates are measured once, untimed, as a session measures them on its model.
const DataRates& probed_rates() {
  static const DataRates rates = [] {
    BatchSearcher bs(*bench_state().device);
    return probe_data_rates(*bench_state().device, bs, bench_state().config.k, device_status().props.major);
  }();
  return rates;
}

void auto_fixture(benchmark::State& st, int batch) {
  const AutoChoice c = auto_batch(batch, bench_state().config.k, true, bench_state().config.dim,
                                  device_status().props.major, &probed_rates());
  st.SetLabel(c.many->name);
  batch_fixture(st, c.many, batch, false, 0);
  for (const AutoChoice::Priced& p : c.priced) st.counters[std::string("predicted_ms:") + p.pipeline->name] = p.ms;
}

}  // namespace

void register_batch_fixtures() {
  for (int b : kBatches) timed(add(FixtureName("batch_auto").axis("batch", b), auto_fixture, b));
  for (const BatchPipeline& p : batch_pipelines()) {
    for (int b : kBatches) {
      if (p.per_query && (b > kLoopMaxBatch || (b > kLoopDenseBatch && b < kLoopMaxBatch))) continue;
      timed(add(FixtureName("batch", p.name).axis("batch", b), batch_fixture, &p, b, false, 0));
    }
    // Per-query loops have no tiles; the fused and filtered scans have no GEMM or tile size of their own.
    if (p.per_query || !p.scan_row->gemm_tiles) continue;
    for (int b : kGemmBatches)
      timed(add(FixtureName("batch_gemm", p.name).axis("batch", b), batch_fixture, &p, b, true, 0));
    if (p.input != GemmInput::F32)
      for (int t : kTiles)
        timed(add(FixtureName("batch_tile", p.name).axis("batch", 1024).axis("tile", t), batch_fixture, &p, 1024, false,
                  t));
  }
}

}  // namespace distancies::bench
