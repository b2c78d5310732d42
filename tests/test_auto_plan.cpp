// `--variant auto` (variants/embeddings/auto_plan.hpp): the choices its measured table implies,
// on the CPU. The table itself is generated (scripts/codegen/auto_policy.py); these tests hold the
// decision rules, not particular timings.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include <string>

#include "variants/embeddings/auto_plan.hpp"
#include "variants/embeddings/batch_scans.hpp"

using namespace distancies;

TEST(AutoPlan, OneQueryMakesNoCopyForASingleQuery) {
  const AutoChoice c = auto_one_query(10, 1, false);
  ASSERT_NE(c.one, nullptr);
  EXPECT_STREQ(c.one->name, "fused");
  EXPECT_NE(c.why.find("16-bit copy"), std::string::npos) << c.why;
}

TEST(AutoPlan, OneQueryTakesTheCopyWhenItExistsOrPays) {
  EXPECT_STREQ(auto_one_query(10, 1, true).one->name, "fused_f16");
  EXPECT_STREQ(auto_one_query(10, 1000, false).one->name, "fused_f16");
  // Somewhere between one query and a thousand the copy starts to pay, and stays paying.
  bool paid = false;
  for (long long q = 1; q <= 1000; ++q) {
    const bool f16 = std::string(auto_one_query(10, q, false).one->name) == "fused_f16";
    EXPECT_TRUE(f16 || !paid) << "the copy paid at fewer queries than " << q;
    paid = paid || f16;
  }
}

TEST(AutoPlan, OneQueryBeyondTheCertificateIsFp32) {
  const AutoChoice c = auto_one_query(BatchPolicy::kMaxK + 1, 1000, true);
  EXPECT_STREQ(c.one->name, "fused");
  EXPECT_NE(c.why.find("beyond"), std::string::npos) << c.why;
}

TEST(AutoPlan, BatchOfOneIsTheOneQueryLoopAndLargeBatchesUseTheTensorCores) {
  EXPECT_STREQ(auto_batch(1, 10, false).many->name, "batch_fused_loop");
  const AutoChoice big = auto_batch(1024, 10, false);
  ASSERT_NE(big.many, nullptr);
  EXPECT_EQ(big.many->per_query_pipeline, nullptr) << big.many->name;
  EXPECT_NE(big.why.find("predicted"), std::string::npos) << big.why;
}

TEST(AutoPlan, EveryBatchSizeGetsAnExactRegisteredPipeline) {
  for (int b = 1; b <= 1 << 14; b *= 2)
    for (int k : {1, 10, 128, 129, 1000}) {
      const AutoChoice c = auto_batch(b, k, b % 3 == 0);
      ASSERT_NE(c.many, nullptr) << b << " " << k;
      EXPECT_EQ(&batch_pipeline(c.many->name), c.many) << "a registered row";
      if (k > BatchPolicy::kMaxK) {
        EXPECT_NE(c.many->per_query_pipeline, nullptr) << "k beyond the batch certificate";
      }
    }
}

// A scan that would refuse the model or the device is not chosen: its fallback would answer the
// whole batch.
TEST(AutoPlan, SkipsScansThatRefuseTheModelOrTheDevice) {
  const BatchScanRow& i8 = batch_scan("filtered_i8");
  for (int b = 1; b <= 1 << 14; b *= 2) {
    const AutoChoice wide = auto_batch(b, 10, true, 7000, 9);
    ASSERT_NE(wide.many, nullptr) << b;
    EXPECT_FALSE(wide.many->scan_row && batch_scan_refusal(*wide.many->scan_row, 7000, BatchPolicy::candidates(10), 9))
        << wide.many->name;
    const AutoChoice old = auto_batch(b, 10, true, 300, 7);
    ASSERT_NE(old.many, nullptr) << b;
    EXPECT_FALSE(old.many->scan_row && old.many->scan_row->filters) << "compute capability 7 has no mma.sync m16n8k16";
    // The int8 walk is sm_90a code: an 8.x device gets another pipeline, a 9.0 one with rows
    // of more than 320 columns too.
    EXPECT_NE(auto_batch(b, 10, true, 300, 8).many->scan_row, &i8) << b;
    EXPECT_NE(auto_batch(b, 10, true, 400, 9).many->scan_row, &i8) << b;
  }
  // And the table's choice where nothing refuses: a filtered scan at every batch size on the
  // H100 (batch_i8_filter where the int8 walk was built, the canonical sweep, results/manifest.json).
  for (int b = 1; b <= 1 << 13; b *= 2)
    EXPECT_TRUE(auto_batch(b, 10, true, 300, 9).many->scan_row->filters) << "B = " << b;
  if (!batch_scan_refusal(i8, 300, 64, 9)) {
    EXPECT_EQ(auto_batch(1024, 10, true, 300, 9).many->scan_row, &i8);
  }
  EXPECT_TRUE(batch_scan_refusal(batch_scan("filtered_mma"), 7000, 64, 0));
  EXPECT_TRUE(batch_scan_refusal(i8, 7000, 64, 0));
  EXPECT_TRUE(batch_scan_refusal(i8, 300, 64, 8));
  EXPECT_FALSE(batch_scan_refusal(batch_scan("gemm_tiles"), 7000, 64, 7));
}

TEST(AutoPlan, NamesTheGpuItsTableWasMeasuredOn) { EXPECT_NE(std::string(auto_policy_measured_on()), ""); }

// Data-aware planning: a pipeline whose certificate fails on the data pays for redoing its
// queries down its fallback chain; with nothing redone the table alone decides.
TEST(AutoPlan, RedoneQueriesCountAgainstAPipeline) {
  for (int b : {1, 16, 128, 1024, 8192}) {
    const AutoChoice table = auto_batch(b, 10, true, 300, 9);
    DataRates none;
    none.probe_queries = 64;
    for (const auto& p : batch_pipelines()) none.batch.push_back({&p, 0.0});
    EXPECT_EQ(auto_batch(b, 10, true, 300, 9, &none).many, table.many) << b;
    // Everything the table's choice answers is redone: it must now cost more than another.
    DataRates fails = none;
    for (auto& r : fails.batch)
      if (r.pipeline == table.many) r.redone = 1.0;
    const AutoChoice data = auto_batch(b, 10, true, 300, 9, &fails);
    ASSERT_NE(data.many, nullptr);
    if (table.many->fallback_pipeline) {
      EXPECT_NE(data.many, table.many) << b << ": " << data.why;
    }
    EXPECT_NE(data.why.find("redone"), std::string::npos) << data.why;
  }
}

// The per-query loops' time is linear in the batch: where the probe timed them on the model, the
// measured time a query decides (the table need not list them); where it did not, the table does.
TEST(AutoPlan, AMeasuredLoopDecidesTheSmallBatches) {
  const BatchPipeline& i8_loop = batch_pipeline("batch_i8_loop");
  for (int b : {1, 16, 1024}) EXPECT_NE(auto_batch(b, 10, true, 300, 9).many, &i8_loop) << "table alone, B = " << b;
  DataRates r;
  r.probe_queries = 64;
  for (const auto& p : batch_pipelines())
    if (!p.per_query_pipeline) r.batch.push_back({&p, 0.0});
  r.loops.push_back({&batch_pipeline("batch_fused_loop"), auto_table_ms("batch_fused_loop", 1)});
  r.loops.push_back({&i8_loop, 0.01});  // far below any batch scan's time for one query
  const AutoChoice one = auto_batch(1, 10, true, 300, 9, &r);
  EXPECT_EQ(one.many, &i8_loop) << one.why;
  EXPECT_NE(one.why.find("0.010 ms a query measured"), std::string::npos) << one.why;
  // 1,024 queries at 0.01 ms is 10 ms: the batch scans are faster there.
  EXPECT_NE(auto_batch(1024, 10, true, 300, 9, &r).many, &i8_loop);
  // A loop measured slower than the batch scans is not taken.
  r.loops.back().ms_per_query = 50.0;
  EXPECT_NE(auto_batch(1, 10, true, 300, 9, &r).many, &i8_loop);
}

TEST(AutoPlan, OneQueryTakesTheFastestMeasuredLoop) {
  DataRates r;
  r.probe_queries = 64;
  const double fused = auto_table_ms("batch_fused_loop", 1);
  ASSERT_TRUE(std::isfinite(fused));
  r.loops.push_back({&batch_pipeline("batch_fused_loop"), fused});
  r.loops.push_back({&batch_pipeline("batch_i8_loop"), fused / 4});
  const AutoChoice c = auto_one_query(10, 1000, true, &r);
  EXPECT_STREQ(c.one->name, "fused_i8");
  EXPECT_NE(c.why.find("measured"), std::string::npos) << c.why;
  // Slower than what the table predicts for fused_f16 (priced on the same scale): the table's choice stays.
  r.loops.back().ms_per_query = fused * 0.99;
  EXPECT_STREQ(auto_one_query(10, 1000, true, &r).one->name, "fused_f16");
  // A single query without the copies: `fused` unless a measured loop beats it.
  r.loops.back().ms_per_query = fused * 2;
  EXPECT_STREQ(auto_one_query(10, 1, false, &r).one->name, "fused");
}

TEST(AutoPlan, RatesOfUnlistedPipelinesAreZero) {
  DataRates r;
  EXPECT_EQ(r.redone(batch_pipeline("batch_i8_filter")), 0.0);
  r.batch.push_back({&batch_pipeline("batch_i8_filter"), 0.5});
  EXPECT_EQ(r.redone(batch_pipeline("batch_i8_filter")), 0.5);
  EXPECT_EQ(r.redone(batch_pipeline("batch_f16_filter")), 0.0);
}

TEST(AutoPlan, OneQueryAvoidsACopyWhoseCertificateFails) {
  DataRates r;
  r.probe_queries = 64;
  EXPECT_STREQ(auto_one_query(10, 1000, true, &r).one->name, "fused_f16");
  r.one_query_f16 = 1.0;
  const AutoChoice c = auto_one_query(10, 1000, true, &r);
  EXPECT_STREQ(c.one->name, "fused");
  EXPECT_NE(c.why.find("own rows"), std::string::npos) << c.why;
}

// The table is one shape's; the probe's time on this model scales each pipeline's figures. A
// pipeline the probe finds 4 times slower than its table loses the batch to the next best, and a
// uniform scale (a faster or slower card) changes nothing.
TEST(AutoPlan, ProbedTimesScaleTheTable) {
  for (int b : {1, 16, 128, 1024}) {
    const AutoChoice table = auto_batch(b, 10, true, 300, 9);
    DataRates uniform;
    uniform.probe_queries = 64;
    for (const auto& p : batch_pipelines()) uniform.batch.push_back({&p, 0.0, 0.5});
    EXPECT_EQ(auto_batch(b, 10, true, 300, 9, &uniform).many, table.many) << b;
    DataRates slow = uniform;
    for (auto& r : slow.batch)
      if (r.pipeline == table.many) r.scale = 4 * 0.5;
    const AutoChoice c = auto_batch(b, 10, true, 300, 9, &slow);
    EXPECT_NE(c.many, table.many) << b << ": " << c.why;
    EXPECT_NE(c.why.find("x 0.50"), std::string::npos) << c.why;
  }
  DataRates r;
  EXPECT_EQ(r.scale(batch_pipeline("batch_i8_filter")), 1.0);
  r.batch.push_back({&batch_pipeline("batch_i8_filter"), 0.0, std::nan("")});
  EXPECT_EQ(r.scale(batch_pipeline("batch_i8_filter")), 1.0) << "an unmeasured scale is 1";
}

// The large probe batch's scale decides the large batches: a pipeline that the probe finds 4 times
// slower than its table at 512 queries (and as fast at 64) loses a batch of 1,024, keeps those
// of up to 64, and is scaled between the two on a log-log line.
TEST(AutoPlan, TheLargeProbeScalesLargeBatches) {
  const AutoChoice table = auto_batch(1024, 10, true, 300, 9);
  ASSERT_NE(table.many, nullptr);
  DataRates r;
  r.probe_queries = 64;
  for (const auto& p : batch_pipelines()) r.batch.push_back({&p, 0.0, 1.0});
  for (auto& x : r.batch)
    if (x.pipeline == table.many) x.scale_large = 4.0, x.large_batch = 512;
  EXPECT_NE(auto_batch(1024, 10, true, 300, 9, &r).many, table.many);
  for (int b : {1, 16, 64})
    EXPECT_EQ(auto_batch(b, 10, true, 300, 9, &r).many, auto_batch(b, 10, true, 300, 9).many) << b;
  EXPECT_DOUBLE_EQ(r.scale(*table.many, 64), 1.0);
  EXPECT_DOUBLE_EQ(r.scale(*table.many, 512), 4.0);
  EXPECT_DOUBLE_EQ(r.scale(*table.many, 4096), 4.0);
  EXPECT_NEAR(r.scale(*table.many, 181), 2.0, 0.01);  // sqrt(64 x 512): halfway on the log line
  EXPECT_DOUBLE_EQ(r.scale(*table.many), 1.0) << "no batch size: the probe's own";
  // The small probe batch's scale decides the small batches, and is interpolated up to the probe's.
  for (auto& x : r.batch)
    if (x.pipeline == table.many) x.scale_small = 0.25, x.small_batch = 16;
  EXPECT_DOUBLE_EQ(r.scale(*table.many, 1), 0.25);
  EXPECT_DOUBLE_EQ(r.scale(*table.many, 16), 0.25);
  EXPECT_NEAR(r.scale(*table.many, 32), 0.5, 1e-9);  // halfway between 16 and 64 on the log line
  EXPECT_DOUBLE_EQ(r.scale(*table.many, 64), 1.0);
  EXPECT_DOUBLE_EQ(r.scale(*table.many, 512), 4.0);
  EXPECT_DOUBLE_EQ(r.scale(*table.many), 1.0) << "no batch size: still the probe's own";
  // The share measured on 512 rows stands until live traffic is the larger sample.
  const BatchPipeline& p = *table.many;
  r.observe(p, 100, 200);
  EXPECT_DOUBLE_EQ(r.redone(p), 0.0) << "200 live queries do not outweigh the probe's 512";
  r.observe(p, 200, 400);
  EXPECT_DOUBLE_EQ(r.redone(p), 0.5);
}

// A REPL or batch stream whose fallbacks climb: once the live queries through the chosen pipeline
// outnumber the probe's, their redone share replaces the probe's and the next batch moves on.
TEST(AutoPlan, ClimbingFallbacksSwitchThePipeline) {
  DataRates r;
  r.probe_queries = 64;
  for (const auto& p : batch_pipelines()) r.batch.push_back({&p, 0.0});
  const AutoChoice before = auto_batch(1024, 10, true, 300, 9, &r);
  ASSERT_NE(before.many, nullptr);
  ASSERT_NE(before.many->fallback_pipeline, nullptr) << before.many->name;
  r.observe(*before.many, 10, 32);  // fewer live queries than the probe's: not yet trusted
  EXPECT_EQ(r.redone(*before.many), 0.0);
  r.observe(*before.many, 1000, 1024);
  EXPECT_NEAR(r.redone(*before.many), 1010.0 / 1056.0, 1e-12);
  const AutoChoice after = auto_batch(1024, 10, true, 300, 9, &r);
  EXPECT_NE(after.many, before.many) << after.why;
  r.observe(*before.many, 0, 100000);  // and back when they fall
  EXPECT_EQ(auto_batch(1024, 10, true, 300, 9, &r).many, before.many);
}

// The redo is priced at its expectation: a pipeline that redoes each query with probability s
// adds, for a batch of B, P(N > 0) = 1 - (1 - s)^B times its fallback's time for E[N | N > 0]
// queries; a share of one redoes the whole batch, a share of none adds nothing.
TEST(AutoPlan, TheRedoIsPricedAtItsExpectation) {
  const BatchPipeline& walk = batch_pipeline("batch_i8_filter");
  ASSERT_NE(walk.fallback_pipeline, nullptr);
  const std::string fb = walk.fallback_pipeline->name;
  DataRates r;
  r.probe_queries = 64;
  for (const auto& p : batch_pipelines()) r.batch.push_back({&p, 0.0, 1.0});
  const auto priced = [&](int b) {
    for (const auto& x : auto_batch(b, 10, true, 300, 9, &r).priced)
      if (x.pipeline == &walk) return x.ms;
    return std::nan("");
  };
  const auto share = [&](double s) {
    for (auto& x : r.batch)
      if (x.pipeline == &walk) x.redone = s;
  };
  for (int b : {16, 128, 1024}) {
    SCOPED_TRACE(b);
    share(0.0);
    const double plain = priced(b);
    ASSERT_NEAR(plain, auto_table_ms("batch_i8_filter", b), 1e-12) << "nothing redone: the table's time";
    share(1.0 / 128);
    const double any = 1 - std::pow(1 - 1.0 / 128, b);
    const int n = std::max(1, static_cast<int>(std::lround(b / 128.0 / any)));
    EXPECT_NEAR(priced(b), plain + any * auto_table_ms(fb, n), 1e-12);
    share(1.0);
    EXPECT_NEAR(priced(b), plain + auto_table_ms(fb, b), 1e-12) << "every query redone, every time";
  }
}

// A streamed model: the int8 copy from host memory moves about a quarter of the bytes; `auto`
// takes it once the queries seen pay for making it, or where it exists, within its certificate's
// k, and leaves it where the last query's chunks mostly fell back.
TEST(AutoPlan, StreamedQueriesTakeTheInt8CopyOnceItPays) {
  const AutoChoice first = auto_streamed_one_query(10, 300, 1, false, 0);
  EXPECT_STREQ(first.one->name, "fused");
  EXPECT_NE(first.why.find("< making the int8 copy"), std::string::npos) << first.why;
  const AutoChoice later = auto_streamed_one_query(10, 300, 20, false, 0);
  EXPECT_STREQ(later.one->name, "fused_i8");
  EXPECT_NE(later.why.find("> making the int8 copy"), std::string::npos) << later.why;
  EXPECT_STREQ(auto_streamed_one_query(10, 300, 1, true, 0).one->name, "fused_i8");
  EXPECT_STREQ(auto_streamed_one_query(BatchPolicy::kMaxK + 1, 300, 100, true, 0).one->name, "fused");
  const AutoChoice failing = auto_streamed_one_query(10, 300, 100, true, 0.8);
  EXPECT_STREQ(failing.one->name, "fused");
  EXPECT_NE(failing.why.find("80 %"), std::string::npos) << failing.why;
}
