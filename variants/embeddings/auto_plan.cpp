#include "variants/embeddings/auto_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

#include "variants/embeddings/batch_scans.hpp"

namespace distancies {
namespace {

struct OneQueryFigures {
  double fused_ms, fused_f16_ms, read_ms, read16_ms;
};
struct BatchFigure {
  const char* pipeline;
  int batch;
  double ms;
};
#include "variants/embeddings/auto_policy.inc"

// The 16-bit certificate keeps at most this many candidates (larger k: the fp32 fallback).
constexpr int kReducedMaxK = BatchPolicy::kMaxK;

// Making a 16-bit copy reads the fp32 model and writes half its bytes: the two read floors.
double copy_ms() { return kOneQuery.read_ms + kOneQuery.read16_ms; }

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c);
  return buf;
}

// y at x on the straight line through (x0, y0) and (x1, y1) in log-log coordinates.
double log_log(double x, double x0, double y0, double x1, double y1) {
  const double t = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
  return std::exp(std::log(y0) + t * (std::log(y1) - std::log(y0)));
}

// Median time of `pipeline` at `batch`, log-log interpolated between its measured sizes (and
// extrapolated from the nearest two beyond them); NaN when the table has fewer than two.
double predicted_ms(std::string_view pipeline, int batch) {
  const BatchFigure* lo = nullptr;
  const BatchFigure* hi = nullptr;
  const BatchFigure* first = nullptr;
  const BatchFigure* second = nullptr;
  const BatchFigure* last = nullptr;
  const BatchFigure* before_last = nullptr;
  for (const auto& f : kBatchFigures) {
    if (pipeline != f.pipeline) continue;
    if (f.batch == batch) return f.ms;
    if (f.batch < batch && (!lo || f.batch > lo->batch)) lo = &f;
    if (f.batch > batch && (!hi || f.batch < hi->batch)) hi = &f;
    if (!first || f.batch < first->batch)
      second = first, first = &f;
    else if (!second || f.batch < second->batch)
      second = &f;
    if (!last || f.batch > last->batch)
      before_last = last, last = &f;
    else if (!before_last || f.batch > before_last->batch)
      before_last = &f;
  }
  if (!lo)
    lo = first, hi = second;  // below the table
  else if (!hi)
    lo = before_last, hi = last;  // above it
  if (!lo || !hi || lo == hi) return std::numeric_limits<double>::quiet_NaN();
  return log_log(batch, lo->batch, lo->ms, hi->batch, hi->ms);
}

bool needs_16bit_copy(const BatchPipeline& p) { return p.input == GemmInput::F16 || p.input == GemmInput::BF16; }

// Expected time of redoing the queries of a batch of `batch` that `p` could not certify, each
// one independently with probability `share`: with N of them, the fallback runs when N > 0, so the
// expectation is P(N > 0) times its time for E[N | N > 0] queries (exact for one query and for
// many; the redo of a fixed set is not paid by every batch), and so on down the chain with each
// step's own share.
double redo_ms(const BatchPipeline& p, int batch, double share, const DataRates& rates, int depth = 0) {
  const BatchPipeline* fb = p.fallback_pipeline;
  if (!fb || batch <= 0 || !(share > 0) || depth > 8) return 0;
  const double s = std::min(share, 1.0);
  const double any = 1 - std::pow(1 - s, batch);  // P(N > 0)
  if (!(any > 0)) return 0;
  const int n = std::max(1, static_cast<int>(std::lround(batch * s / any)));  // E[N | N > 0]
  const double one = predicted_ms(fb->name, n) * rates.scale(*fb, n);
  if (!std::isfinite(one)) return 0;
  return any * (one + redo_ms(*fb, n, rates.redone(*fb), rates, depth + 1));
}

// The probe timed the per-query loops on this model (their copies made, their fallbacks in the
// time): the table's choice `c` against the fastest of them. `c` is priced on the same scale,
// its table time times the measured `fused` loop's over the table's `fused`.
void prefer_measured_loop(AutoChoice& c, const DataRates& rates, double redone_f16, bool copy_made) {
  double fused = std::numeric_limits<double>::quiet_NaN();
  const DataRates::Loop* best = nullptr;
  for (const DataRates::Loop& l : rates.loops) {
    if (!(l.ms_per_query > 0)) continue;
    if (l.pipeline->per_query_pipeline == &exact_pipeline()) fused = l.ms_per_query;
    if (!best || l.ms_per_query < best->ms_per_query) best = &l;
  }
  if (!best) return;
  const double scale = std::isfinite(fused) ? fused / kOneQuery.fused_ms : 1.0;
  double chosen = kOneQuery.fused_ms * scale;
  if (c.one != &exact_pipeline())
    chosen = (kOneQuery.fused_f16_ms + redone_f16 * kOneQuery.fused_ms) * scale + (copy_made ? 0.0 : copy_ms());
  if (best->pipeline->per_query_pipeline == c.one || !(best->ms_per_query < chosen)) return;
  c.why = fmt("measured %.3f ms a query on the model's own rows (its fallbacks included), against %.3f ms for ",
              best->ms_per_query, chosen) +
          c.one->name;
  c.one = best->pipeline->per_query_pipeline;
}

}  // namespace

double DataRates::redone(const BatchPipeline& p) const {
  for (const Rate& r : batch)
    if (r.pipeline == &p) return r.redone;
  return 0;
}

double DataRates::loop_ms(const BatchPipeline& p) const {
  for (const Loop& l : loops)
    if (l.pipeline == &p && l.ms_per_query > 0) return l.ms_per_query;
  return std::numeric_limits<double>::quiet_NaN();
}

void DataRates::observe(const BatchPipeline& p, long long redone, long long queries) {
  if (queries <= 0 || probe_queries <= 0) return;
  for (Rate& r : batch) {
    if (r.pipeline != &p) continue;
    r.seen += queries;
    r.seen_redone += redone;
    // The probe's share rests on the large batch where it was asked: live traffic replaces it
    // once it is the larger sample.
    if (r.seen >= std::max<long long>(probe_queries, r.large_batch)) r.redone = double(r.seen_redone) / double(r.seen);
    return;
  }
}

double DataRates::scale(const BatchPipeline& p, int batch_size) const {
  for (const Rate& r : batch) {
    if (r.pipeline != &p || !(std::isfinite(r.scale) && r.scale > 0)) continue;
    const bool large = std::isfinite(r.scale_large) && r.scale_large > 0 && r.large_batch > probe_queries;
    const bool small =
        std::isfinite(r.scale_small) && r.scale_small > 0 && r.small_batch > 0 && r.small_batch < probe_queries;
    if (small && batch_size > 0 && batch_size < probe_queries)
      return batch_size <= r.small_batch ? r.scale_small
                                         : log_log(batch_size, r.small_batch, r.scale_small, probe_queries, r.scale);
    if (!large || batch_size <= probe_queries) return r.scale;
    if (batch_size >= r.large_batch) return r.scale_large;
    return log_log(batch_size, probe_queries, r.scale, r.large_batch, r.scale_large);
  }
  return 1;
}

double auto_table_ms(std::string_view pipeline, int batch) { return predicted_ms(pipeline, batch); }

AutoChoice auto_one_query(int k, long long expected_queries, bool copy_made, const DataRates* rates) {
  AutoChoice c;
  const double redone = rates && rates->probe_queries > 0 ? rates->one_query_f16 : 0.0;
  const double saving = kOneQuery.fused_ms - kOneQuery.fused_f16_ms - redone * kOneQuery.fused_ms;
  if (k > kReducedMaxK) {
    c.one = &exact_pipeline();
    c.why = "k = " + std::to_string(k) + " is beyond the 16-bit certificate (" + std::to_string(kReducedMaxK) + ")";
  } else if (saving <= 0) {
    c.one = &exact_pipeline();
    c.why = fmt("the 16-bit certificate failed for %.0f %% of the model's own rows", 100.0 * redone);
  } else if (copy_made || saving * double(expected_queries) > copy_ms()) {
    c.one = &f16_one_query_pipeline();
    c.why = copy_made ? std::string("the 16-bit copy exists")
                      : fmt("%.0f queries x %.3f ms saved > the 16-bit copy (%.3f ms)", double(expected_queries),
                            saving, copy_ms());
  } else {
    c.one = &exact_pipeline();
    c.why =
        fmt("%.0f queries x %.3f ms saved < the 16-bit copy (%.3f ms)", double(expected_queries), saving, copy_ms());
  }
  if (rates && !rates->loops.empty()) prefer_measured_loop(c, *rates, redone, copy_made);
  return c;
}

AutoChoice auto_streamed_one_query(int k, int dim, long long expected_queries, bool copy_made, double redone) {
  AutoChoice c;
  const double fp32_row = static_cast<double>(storage_leading_dim(Storage::F32, dim)) * 4 + 4;
  const double i8_row = static_cast<double>(storage_leading_dim(Storage::I8, dim)) + 3 * 4;  // scale, correction, norm
  const double saving = 1 - i8_row / fp32_row;  // a streamed fp32 query's share the int8 copy saves
  if (k > kReducedMaxK) {
    c.one = &exact_pipeline();
    c.why = "k = " + std::to_string(k) + " is beyond the int8 certificate (" + std::to_string(kReducedMaxK) + ")";
  } else if (redone > 0.5) {
    c.one = &exact_pipeline();
    c.why = fmt("the int8 certificate failed in %.0f %% of the last query's chunks", 100.0 * redone);
  } else if (copy_made || saving * double(expected_queries) > kStreamCopyMaking) {
    c.one = &pipelines().at("fused_i8");
    c.why = copy_made ? std::string("streamed: the int8 copy is in host memory (a quarter of the bytes)")
                      : fmt("streamed: %.0f queries x %.2f of a query saved > making the int8 copy (%.0f queries)",
                            double(expected_queries), saving, kStreamCopyMaking);
  } else {
    c.one = &exact_pipeline();
    c.why = fmt("streamed: %.0f queries x %.2f of a query saved < making the int8 copy (%.0f queries)",
                double(expected_queries), saving, kStreamCopyMaking);
  }
  return c;
}

AutoChoice auto_batch(int batch, int k, bool copy_made, int dim, int cc_major, const DataRates* rates) {
  AutoChoice c;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& p : batch_pipelines()) {
    // Above the candidates a batch certificate keeps, everything but the per-query loop falls back.
    if (k > BatchPolicy::kMaxK && !p.per_query_pipeline) continue;
    if (dim > 0 && p.scan_row && batch_scan_refusal(*p.scan_row, dim, BatchPolicy::candidates(k), cc_major)) continue;
    const double loop = rates && p.per_query_pipeline ? rates->loop_ms(p) : std::nan("");
    double ms = std::isfinite(loop) ? loop * std::max(batch, 1) : predicted_ms(p.name, std::max(batch, 1));
    if (!std::isfinite(ms)) continue;  // not in the measured table
    if (needs_16bit_copy(p) && !copy_made) ms += copy_ms();
    if (rates && rates->probe_queries > 0 && !std::isfinite(loop))
      ms = ms * rates->scale(p, batch) + redo_ms(p, std::max(batch, 1), rates->redone(p), *rates);
    c.priced.push_back({&p, ms});
    if (ms < best) {
      best = ms;
      c.many = &p;
    }
  }
  if (!c.many) {  // nothing measured: the exact per-query loop
    c.many = &exact_batch_loop();
    c.why = "no measured batch figures apply";
    return c;
  }
  c.why = fmt("predicted %.3f ms for %.0f queries", best, double(batch)) +
          (needs_16bit_copy(*c.many) && !copy_made ? " (16-bit copy included)" : "");
  if (rates && std::isfinite(rates->loop_ms(*c.many)))
    c.why +=
        fmt(", %.3f ms a query measured on the model's own rows (its fallbacks included)", rates->loop_ms(*c.many));
  else if (rates && rates->probe_queries > 0)
    c.why += fmt(", %.0f %% redone on its fallback, the table's times x %.2f (measured on %.0f of the model's rows)",
                 100.0 * rates->redone(*c.many), rates->scale(*c.many, batch), double(rates->probe_queries));
  return c;
}

const char* auto_policy_measured_on() { return kPolicyMeasuredOn; }

}  // namespace distancies
