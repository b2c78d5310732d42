// The synthetic data families (docs/data.md): their names, the statistics each promises, the
// GPU generator bit for bit the host's, and every registered pipeline, one query and batch,
// exact on every family. GPU tests skip, visibly, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "batch_check.hpp"
#include "gpu_skip.hpp"
#include "harness/embeddings/batch_search.hpp"
#include "harness/embeddings/data_probe.hpp"
#include "harness/synthetic.hpp"
#include "oracle_check.hpp"
#include "runtime/device_model.hpp"
#include "runtime/error.hpp"
#include "variants/embeddings/auto_plan.hpp"
#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/registry.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

double cosine(const Model& m, std::int64_t a, std::int64_t b) {
  double dot = 0, na = 0, nb = 0;
  for (int j = 0; j < m.dim; ++j) {
    dot += double(m.row(a)[j]) * m.row(b)[j];
    na += double(m.row(a)[j]) * m.row(a)[j];
    nb += double(m.row(b)[j]) * m.row(b)[j];
  }
  return dot / std::sqrt(na * nb);
}

// Mean cosine over pairs (i, i + rows/2): distinct, spread over the model.
double mean_pair_cosine(const Model& m) {
  const std::int64_t half = m.rows / 2;
  double s = 0;
  for (std::int64_t i = 0; i < half; ++i) s += cosine(m, i, i + half);
  return s / double(half);
}

// The rows of a batch: model rows spread over the model, as the benchmarks ask them.
Batch rows_as_queries(const Model& m, int batch) {
  Batch b;
  for (int i = 0; i < batch; ++i) {
    const std::int64_t row = (static_cast<std::int64_t>(i) * 104729) % m.rows;
    b.q.insert(b.q.end(), m.row(row), m.row(row) + m.dim);
    b.norms.push_back(m.norms[static_cast<std::size_t>(row)]);
  }
  return b;
}

std::string test_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

}  // namespace

TEST(DataFamily, EveryStandardNameRoundTrips) {
  for (const std::string& name : standard_families()) EXPECT_EQ(family_name(make_family(name, 300)), name);
}

TEST(DataFamily, BadNamesAreOneClearError) {
  for (const char* bad : {"", "aniso", "aniso:", "aniso:1", "aniso:0", "aniso:x", "dirs:0.8", "gauss", "iid:0.5"}) {
    try {
      make_family(bad, 300);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("family"), std::string::npos) << e.what();
    }
  }
}

TEST(DataFamily, IidIsTheOriginalSyntheticModel) {
  const Model a = make_synthetic_model(500, 50, 17);
  const Model b = make_synthetic_model(500, 50, 17, make_family("iid", 50));
  EXPECT_EQ(0, std::memcmp(a.vectors.data(), b.vectors.data(), a.rows * a.ld * sizeof(float)));
}

TEST(DataFamily, AnisotropicMeanCosineIsTheNamedOne) {
  for (double c : {0.5, 0.8, 0.95, 0.98}) {
    char name[32];
    std::snprintf(name, sizeof name, "aniso:%g", c);
    const Model m = make_synthetic_model(4000, 300, 3, make_family(name, 300));
    EXPECT_NEAR(mean_pair_cosine(m), c, 0.02) << name;
  }
  const Model iid = make_synthetic_model(4000, 300, 3);
  EXPECT_NEAR(mean_pair_cosine(iid), 0.0, 0.01);
}

TEST(DataFamily, DirectionsMeanCosineIsNearTheNamedOne) {
  const Model m = make_synthetic_model(4000, 300, 3, make_family("dirs:0.7", 300));
  EXPECT_NEAR(mean_pair_cosine(m), 0.7, 0.05);
}

TEST(DataFamily, ClusteredHasZipfClustersAndDuplicates) {
  const DataFamily f = make_family("clustered", 300);
  std::map<std::int64_t, int> sizes;
  for (std::int64_t r = 0; r < 200000; ++r) ++sizes[family_cluster(f, 3, r)];
  EXPECT_LE(static_cast<int>(sizes.size()), (1 << f.cluster_levels) - 1);
  EXPECT_NEAR(sizes[0] / 200000.0, 1.0 / f.cluster_levels, 0.01) << "level 0's one cluster";
  const Model m = make_synthetic_model(20000, 64, 3, f);
  int exact = 0;
  for (std::int64_t r = 1; r < m.rows; ++r)
    for (std::int64_t b = std::max<std::int64_t>(0, r - 4096); b < r; ++b)
      if (std::memcmp(m.row(r), m.row(b), m.dim * sizeof(float)) == 0) {
        ++exact;
        break;
      }
  EXPECT_GT(exact, 20000 * 0.005) << "about 1 % of rows are exact copies";
  EXPECT_LT(exact, 20000 * 0.02);
}

TEST(DataFamily, HeavyTailedNormsSpreadOverDecades) {
  const Model m = make_synthetic_model(20000, 64, 3, make_family("heavy", 64));
  const auto [lo, hi] = std::minmax_element(m.norms.begin(), m.norms.end());
  EXPECT_GT(*hi / *lo, 1000.0f);
  EXPECT_GT(*lo, 0.0f);
}

class FamilyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FamilyTest, GpuGeneratorIsBitForBitTheHost) {
  DISTANCIES_REQUIRE_GPU();
  const DataFamily f = make_family(GetParam(), 301);
  const Model host = make_synthetic_model(5003, 301, 99, f);
  const Model back = download_model(generate_synthetic_on_device(5003, 301, 99, 0, f));
  ASSERT_EQ(back.ld, host.ld);
  EXPECT_EQ(0, std::memcmp(back.vectors.data(), host.vectors.data(), host.rows * host.ld * sizeof(float)));
  EXPECT_EQ(back.norms, host.norms);
  // A shard of rows 1000 .. 2999 is those rows of the whole model.
  const Model part = download_model(generate_synthetic_on_device(2000, 301, 99, 1000, f));
  EXPECT_EQ(0, std::memcmp(part.vectors.data(), host.row(1000), 2000 * host.ld * sizeof(float)));
}

TEST_P(FamilyTest, EveryPipelineIsExact) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = make_synthetic_model(12011, 300, 5, make_family(GetParam(), 300));
  DeviceModel dm = upload_model(m);
  const Batch b = rows_as_queries(m, 6);
  GpuSearcher searcher(dm, &m);
  for (const auto& p : pipelines()) {
    SCOPED_TRACE(p.name);
    for (std::size_t i = 0; i < b.norms.size(); ++i)
      expect_matches_oracle(m, b.q.data() + i * m.dim, searcher.search(p, b.q.data() + i * m.dim, b.norms[i], 10), 10);
  }
}

TEST_P(FamilyTest, EveryBatchPipelineIsExactAndFusedBitForBit) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = make_synthetic_model(12011, 300, 5, make_family(GetParam(), 300));
  DeviceModel dm = upload_model(m);
  const Batch b = rows_as_queries(m, 37);
  for (const auto& p : batch_pipelines()) {
    SCOPED_TRACE(p.name);
    BatchSearcher bs(dm);
    const auto got = bs.search(p, b.q.data(), b.norms.data(), 37, 10);
    expect_batch_exact(m, dm, b, got, 10);
    // Fallbacks are allowed (they answer exactly); how many is what the benchmarks measure.
    RecordProperty(test_name(p.name) + "_fallbacks", bs.last_fallbacks());
  }
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyTest, ::testing::ValuesIn(standard_families()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return test_name(i.param); });

TEST_P(FamilyTest, ProbeMeasuresEveryPipelineAutoMayChoose) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = make_synthetic_model(12011, 300, 5, make_family(GetParam(), 300));
  DeviceModel dm = upload_model(m);
  BatchSearcher bs(dm);
  const int cc = device_status().props.major;
  const DataRates r = probe_data_rates(dm, bs, 10, cc);
  EXPECT_EQ(r.probe_queries, kProbeQueries);
  int asked = 0;
  for (const auto& p : batch_pipelines())
    if (!p.per_query_pipeline && !batch_scan_refusal(*p.scan_row, 300, BatchPolicy::candidates(10), cc)) ++asked;
  ASSERT_EQ(static_cast<int>(r.batch.size()), asked);
  for (const auto& rate : r.batch) {
    EXPECT_GE(rate.redone, 0.0) << rate.pipeline->name;
    EXPECT_LE(rate.redone, 1.0) << rate.pipeline->name;
    // Every pipeline in the table is also timed at the small and the large probe batch.
    if (std::isfinite(auto_table_ms(rate.pipeline->name, kProbeSmallQueries))) {
      EXPECT_EQ(rate.small_batch, kProbeSmallQueries) << rate.pipeline->name;
      EXPECT_TRUE(std::isfinite(rate.scale_small) && rate.scale_small > 0) << rate.pipeline->name;
      EXPECT_EQ(rate.large_batch, kProbeLargeQueries) << rate.pipeline->name;
      EXPECT_TRUE(std::isfinite(rate.scale_large) && rate.scale_large > 0) << rate.pipeline->name;
    }
    RecordProperty(test_name(rate.pipeline->name) + "_redone", std::to_string(rate.redone));
  }
  EXPECT_GE(r.one_query_f16, 0.0);
  EXPECT_LE(r.one_query_f16, 1.0);
  // Every per-query loop timed, each time finite and positive.
  int loops = 0;
  for (const auto& p : batch_pipelines()) loops += p.per_query_pipeline != nullptr;
  ASSERT_EQ(static_cast<int>(r.loops.size()), loops);
  for (const auto& l : r.loops) {
    EXPECT_TRUE(std::isfinite(l.ms_per_query) && l.ms_per_query > 0) << l.pipeline->name;
    EXPECT_EQ(r.loop_ms(*l.pipeline), l.ms_per_query) << l.pipeline->name;
  }
  // The plan made with them is a registered pipeline whose predicted time counts the redo.
  const AutoChoice c = auto_batch(1024, 10, true, 300, cc, &r);
  ASSERT_NE(c.many, nullptr);
  EXPECT_NE(c.why.find("redone"), std::string::npos) << c.why;
  // Every pipeline it priced is listed with its prediction, the chosen one the least.
  ASSERT_FALSE(c.priced.empty());
  for (const auto& p : c.priced) {
    EXPECT_TRUE(std::isfinite(p.ms) && p.ms > 0) << p.pipeline->name;
    if (p.pipeline == c.many) {
      for (const auto& o : c.priced) EXPECT_LE(p.ms, o.ms) << o.pipeline->name;
    }
  }
}
