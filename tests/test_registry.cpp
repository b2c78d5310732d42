// The registry model: the built-in tables are consistent, a bad row is caught when the tables
// are checked (never at launch), and one added row (tests/trivial_entry.cpp) reaches the
// catalog, the JSON, the plans and, in this same binary, every registry-driven GPU suite of
// test_gpu_variants.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/registry_report.hpp"
#include "trivial_copy.hpp"
#include "trivial_entry.hpp"
#include "trivial_scan.hpp"
#include "variants/embeddings/plan.hpp"
#include "variants/embeddings/registry.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

bool mentions(const std::vector<std::string>& problems, const std::string& what) {
  for (const auto& p : problems)
    if (p.find(what) != std::string::npos) return true;
  return false;
}

TEST(Registry, EveryTableIsConsistent) {
  EXPECT_TRUE(registry::all_problems().empty()) << registry::all_problems().front();
  EXPECT_NO_THROW(registry::check_all());
}

TEST(Registry, ReferencesAreResolvedWhenTheTablesAreBuilt) {
  const Pipeline& f16 = pipeline("fused_f16");
  ASSERT_NE(f16.fallback_pipeline, nullptr);
  EXPECT_STREQ(f16.fallback_pipeline->name, "fused");
  ASSERT_EQ(f16.stages.size(), 2u);
  EXPECT_STREQ(f16.stages[1]->name, "exact_rerank");
  EXPECT_EQ(pipeline("V4").dot_variant, &dot_variant("warp_shuffle_dot"));
  EXPECT_EQ(batch_pipeline("batch_tf32").fallback_pipeline, &batch_pipeline("batch_sgemm"));
  EXPECT_EQ(batch_pipeline("batch_fused_loop").per_query_pipeline, &pipeline("fused"));
}

// The rows code relies on by role are checked with the tables and are the rows of those names.
TEST(Registry, TheRolesAreTheirRows) {
  EXPECT_TRUE(role_problems().empty());
  EXPECT_EQ(&exact_pipeline(), &pipeline("fused"));
  EXPECT_EQ(&f16_one_query_pipeline(), &pipeline("fused_f16"));
  EXPECT_EQ(&exact_batch_loop(), &batch_pipeline("batch_fused_loop"));
  EXPECT_EQ(&all_rows_dot(), &dot_variant("float4_warp_dot"));
}

TEST(Registry, AnUncertifiedQueryClimbsTheCopiesBeforeFp32) {
  // int8 -> fp16 filter -> fp16 tensor-core tiles -> fp32: each step a wider bound, never a
  // slower path than needed (docs/data.md).
  std::vector<std::string> chain;
  for (const BatchPipeline* p = &batch_pipeline("batch_i8_filter"); p; p = p->fallback_pipeline)
    chain.push_back(p->name);
  EXPECT_EQ(chain, (std::vector<std::string>{"batch_i8_filter", "batch_f16_filter", "batch_f16_h", "batch_sgemm"}));
}

TEST(Registry, AnUnknownNameListsTheKnownOnes) {
  try {
    pipeline("V9");
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("unknown pipeline 'V9' (known: V1, V2"), std::string::npos) << e.what();
  }
}

TEST(Registry, HabitsAreNamed) {
  EXPECT_TRUE(pipeline("V1").habits.copy_model_every_query);
  EXPECT_TRUE(pipeline("V2").habits.scratch_per_query);
  EXPECT_FALSE(pipeline("V4").habits.sync_each_stage);
  EXPECT_EQ(pipeline("V4").habits.describe(), "pinned host buffers");
}

TEST(Registry, BadPipelineRowsAreCaught) {
  auto problems = [](Pipeline p) { return pipeline_problems(p, dot_variants(), topk_stages(), pipelines()); };
  const MemoryHabits h;
  EXPECT_TRUE(mentions(problems({"p", "", "", "no_such_dot", {"first_merge", "botched_merge_sort"}, h}),
                       "unknown dot variant 'no_such_dot'"));
  EXPECT_TRUE(mentions(problems({"p", "", "", "warp_shuffle_dot", {"no_such_stage"}, h}), "unknown top-k stage"));
  // first_merge leaves sorted chunks, not the top k.
  EXPECT_TRUE(mentions(problems({"p", "", "", "warp_shuffle_dot", {"first_merge"}, h}), "not the top k"));
  // The re-rank reads candidate lists; after a dot variant it would get a similarity array.
  EXPECT_TRUE(mentions(problems({"p", "", "", "warp_shuffle_dot", {"exact_rerank"}, h}),
                       "reads per-block candidate lists but gets a similarity per row"));
  // A scan needs the model, not a dot variant's output.
  EXPECT_TRUE(mentions(problems({"p", "", "", "warp_shuffle_dot", {"fused_scan_topk"}, h}), "reads the model"));
  EXPECT_TRUE(mentions(problems({"p", "", "", nullptr, {"fused_scan_topk"}, h, Storage::F32, "nowhere"}),
                       "falls back to unknown pipeline 'nowhere'"));
  EXPECT_TRUE(
      problems({"p", "", "", nullptr, {"reduced_scan_topk", "exact_rerank"}, h, Storage::F16, "fused"}).empty());
}

TEST(Registry, BadStageRowsAreCaught) {
  const TopkStage& bms = topk_stage("botched_merge_sort");
  TopkStage s = bms;
  s.after = "cub_radix_sort";  // leaves the top k, not sorted chunks
  EXPECT_TRUE(
      mentions(stage_problems(s, topk_stages()), "reads sorted k-chunks but 'cub_radix_sort' leaves the top k"));
  s.after = nullptr;
  EXPECT_TRUE(mentions(stage_problems(s, topk_stages()), "names no stage that makes it"));
  s.after = "nope";
  EXPECT_TRUE(mentions(stage_problems(s, topk_stages()), "unknown stage 'nope'"));
}

TEST(Registry, RepeatedNamesAreCaught) {
  registry::Table<DotVariant> t("test", "dot", "dot variant",
                                {dot_variant("warp_shuffle_dot"), dot_variant("warp_shuffle_dot")});
  std::vector<std::string> out;
  registry::check_names(t, out);
  EXPECT_TRUE(mentions(out, "dot variant 'warp_shuffle_dot' registered twice"));
}

TEST(Registry, OneAddedRowReachesTheCatalogAndTheJson) {
  EXPECT_EQ(&topk_stage(kTrivialStage), &trivial_stage);
  EXPECT_EQ(&pipeline(kTrivialPipeline), &trivial_pipeline);
  const std::string list = describe_registry();
  EXPECT_NE(list.find(std::string(kTrivialStage) + " "), std::string::npos) << list;
  EXPECT_NE(list.find(std::string(kTrivialPipeline) + " "), std::string::npos) << list;
  const auto j = registry_json();
  bool stage = false, pipe = false;
  for (const auto& r : j["embeddings"]["topk"]) stage |= r["name"] == kTrivialStage;
  for (const auto& r : j["embeddings"]["pipeline"]) pipe |= r["name"] == kTrivialPipeline;
  EXPECT_TRUE(stage);
  EXPECT_TRUE(pipe);
}

// A scan is one row too: the trivial host scan reaches the catalog, the JSON and its pipeline,
// whose traits name it; the searcher runs it through the batch suites (test_batch_pipelines.cpp).
TEST(Registry, OneAddedScanReachesTheCatalogAndItsPipeline) {
  EXPECT_EQ(&batch_scan(kTrivialScan), &trivial_scan);
  EXPECT_EQ(&batch_pipeline(kTrivialBatchPipeline), &trivial_batch_pipeline);
  EXPECT_EQ(trivial_batch_pipeline.scan_row, &trivial_scan);
  EXPECT_EQ(trivial_batch_pipeline.fallback_pipeline, &batch_pipeline("batch_sgemm"));
  EXPECT_FALSE(batch_scan_refusal(trivial_scan, 7000, 128, 5)) << "a row without a refusal runs every shape";
  const std::string list = describe_registry();
  EXPECT_NE(list.find(std::string(kTrivialScan) + " "), std::string::npos) << list;
  const auto j = registry_json();
  bool scan = false, pipe = false;
  for (const auto& r : j["embeddings"]["scan"]) scan |= r["name"] == kTrivialScan;
  for (const auto& r : j["embeddings"]["batch"])
    if (r["name"] == kTrivialBatchPipeline) pipe = r["traits"]["scan"] == kTrivialScan;
  EXPECT_TRUE(scan);
  EXPECT_TRUE(pipe);
  EXPECT_THROW(batch_scan("no_such_scan"), Error);
}

// A model copy is one maker and one row (trivial_copy.cpp): it reaches the catalog and the JSON,
// the start-up check, the scan that names it, and its bytes for a plan.
TEST(Registry, OneAddedCopyReachesTheCatalogAndItsScan) {
  EXPECT_EQ(&model_copy(kTrivialCopy), &trivial_copy);
  EXPECT_EQ(trivial_scan.copy_row, &trivial_copy);
  EXPECT_EQ(trivial_copy.bytes(1000, 7), 1000u * 8 * sizeof(float));
  const std::string list = describe_registry();
  EXPECT_NE(list.find(std::string(kTrivialCopy) + " "), std::string::npos) << list;
  EXPECT_NE(list.find(std::string("reads copy ") + kTrivialCopy), std::string::npos) << list;
  const auto j = registry_json();
  bool copy = false;
  for (const auto& r : j["embeddings"]["copy"]) copy |= r["name"] == kTrivialCopy;
  EXPECT_TRUE(copy);
  EXPECT_THROW(model_copy("no_such_copy"), Error);
}

// Every copy row says what it holds and has a maker; the built-in reduced copies are found by
// storage, and each plain one names its centred form.
TEST(Registry, EveryCopyRowIsComplete) {
  for (const ModelCopyRow& c : model_copies()) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(model_copy_problems(c).empty());
    EXPECT_GT(c.bytes(2196016, 300), 0u);
  }
  for (Storage s : {Storage::F16, Storage::BF16, Storage::I8}) {
    const ModelCopyRow* r = reduced_copy_row(s);
    ASSERT_NE(r, nullptr);
    ASSERT_NE(r->centred_row, nullptr) << r->name;
    EXPECT_EQ(r->centred_row->after_row, &centre_copy_row()) << r->name;
  }
  EXPECT_EQ(reduced_copy_row(Storage::F32), nullptr);
  EXPECT_EQ(make_plan(pipeline("fused_i8"), 1000, 300, 10).copy, reduced_copy_row(Storage::I8));
  EXPECT_EQ(make_plan(pipeline("fused"), 1000, 300, 10).copy, nullptr);
  EXPECT_EQ(batch_scan("filtered_i8").copy_row, &tiled_i8_copy_row());
}

// Every scan row the searcher can run: it says how many lists it leaves and how it scores, and
// its scratch comes with a binding.
TEST(Registry, EveryScanRowIsComplete) {
  for (const BatchScanRow& s : batch_scans()) {
    SCOPED_TRACE(s.name);
    EXPECT_NE(s.slices, nullptr);
    EXPECT_NE(s.score, nullptr);
    EXPECT_EQ(s.scratch == nullptr, s.bind == nullptr);
    const ScanShape shape{GemmInput::F16, Storage::F32, 37, 300, 304, 10, 64, 4096, 20011};
    EXPECT_GE(s.slices(shape.batch, shape.tile_rows, shape.dim, shape.K), 1);
    if (s.scratch) {
      for (const ScanBuffer& b : s.scratch(shape)) EXPECT_GT(b.bytes, 0u) << b.what;
    }
  }
  for (const BatchPipeline& b : batch_pipelines())
    EXPECT_EQ(b.per_query == nullptr, b.scan_row != nullptr) << b.name << ": a tile pipeline names a known scan";
}

// scripts/reports/batch_roofline.py models every batch pipeline from these traits alone.
TEST(Registry, EveryBatchPipelineCarriesItsRooflineTraits) {
  const auto j = registry_json();
  ASSERT_EQ(j["embeddings"]["batch"].size(), batch_pipelines().size());
  for (const auto& r : j["embeddings"]["batch"]) {
    SCOPED_TRACE(r["name"].get<std::string>());
    ASSERT_TRUE(r.contains("traits"));
    const auto& t = r["traits"];
    for (const char* key : {"scan", "precision", "queries_per_model_read"}) EXPECT_TRUE(t.contains(key)) << key;
    const std::string scan = t["scan"];
    EXPECT_EQ(t.contains("scores"), scan == "gemm_tiles");
    EXPECT_EQ(t.contains("copy"), scan != "per_query");
    const int per_read = std::stoi(t["queries_per_model_read"].get<std::string>());
    if (scan == "gemm_tiles" || scan == kTrivialScan)
      EXPECT_EQ(per_read, 0);  // one read of the model serves the whole batch
    else
      EXPECT_GE(per_read, 1);
  }
}

TEST(Registry, OneAddedRowIsPlanned) {
  const Plan plan = make_plan(trivial_pipeline, 1000, 50, 10);
  EXPECT_EQ(plan.dot, &dot_variant("warp_shuffle_dot"));
  ASSERT_EQ(plan.stages.size(), 1u);
  EXPECT_EQ(plan.stages[0], &trivial_stage);
  EXPECT_EQ(plan.temp_bytes, 0u);
  EXPECT_TRUE(plan.habits.pinned_host);
  EXPECT_EQ(plan.fallback, nullptr);
  EXPECT_GE(plan.workspace_bytes, plan.capacity * 2 * (sizeof(float) + sizeof(int)));
  EXPECT_THROW(make_plan(trivial_pipeline, 1000, 50, 0), std::exception);
}

}  // namespace
