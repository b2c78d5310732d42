// Every model copy row (variants/embeddings/model_copies.hpp), driven by the registry: a look-up
// makes nothing; preparing makes the copy once, from its row, and keeps it with the model; it holds
// no more bytes than its row says; a view's changed rows drop it and the next preparation re-fills
// it; a centred copy of a model that is not centred is one refusal line. And the searchers prepare
// exactly what their plans and scans read. Linked into test_registry too, where the trivial copy
// (trivial_copy.cpp) runs through the same cases.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "harness/embeddings/batch_search.hpp"
#include "harness/embeddings/gpu_search.hpp"
#include "harness/synthetic.hpp"
#include "runtime/device_model.hpp"
#include "test_models.hpp"
#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/plan.hpp"
#include "variants/embeddings/registry.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

// DISTANCIES_CENTRE for one scope (read when a model's centre is made).
struct CentreSetting {
  explicit CentreSetting(const char* v) { setenv("DISTANCIES_CENTRE", v, 1); }
  ~CentreSetting() { unsetenv("DISTANCIES_CENTRE"); }
};

std::vector<std::string> names_of_model_copies() {
  std::vector<std::string> v;
  for (const ModelCopyRow& r : model_copies()) v.push_back(r.name);
  return v;
}

bool centred_row(const ModelCopyRow& r) { return r.after_row == &centre_copy_row(); }

class ModelCopyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelCopyTest, MadeOnceByItsRowThenOnlyLookedUp) {
  DISTANCIES_REQUIRE_GPU();
  const ModelCopyRow& row = model_copy(GetParam());
  const CentreSetting on("on");  // every centred copy can be made
  for (int dim : {7, 50, 301}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    const Model m = make_synthetic_model(3001, dim, fresh_seed(), make_family("aniso:0.9", dim));
    DeviceModel dm = upload_model(m);
    EXPECT_THROW(prepared_copy(dm, row), Error) << "a look-up made the copy";
    EXPECT_EQ(dm.find_copy(row.name), nullptr);
    const DeviceModel::Copy& made = prepare_copy(dm, row);
    if (row.after_row) {
      EXPECT_NE(dm.find_copy(row.after_row->name), nullptr) << "made before the one it comes after";
    }
    EXPECT_EQ(&prepare_copy(dm, row), &made) << "made twice";
    EXPECT_EQ(&prepared_copy(dm, row), &made);
    EXPECT_GT(made.bytes(), 0u);
    EXPECT_LE(made.bytes(), row.bytes(m.rows, m.dim)) << "holds more than its row says";
    EXPECT_GE(dm.copy_bytes(), made.bytes());
    dm.drop_copy(row.name);
    EXPECT_EQ(dm.find_copy(row.name), nullptr);
  }
}

TEST_P(ModelCopyTest, AViewsChangedRowsDropItAndTheNextPreparationRefillsIt) {
  DISTANCIES_REQUIRE_GPU();
  const ModelCopyRow& row = model_copy(GetParam());
  const Model m = make_synthetic_model(2003, 50, fresh_seed(), make_family("aniso:0.9", 50));
  DeviceModel dm = upload_model(m);
  DeviceModel view = DeviceModel::view(dm.d_vectors(), dm.d_norms(), dm.rows, dm.dim, dm.ld, dm.norm_range());
  if (centred_row(row)) {
    // A view's rows change under it: it is never centred, so its centred copies are refused.
    try {
      prepare_copy(view, row);
      ADD_FAILURE() << "a view's centred copy was made";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not centred"), std::string::npos) << e.what();
    }
    return;
  }
  const DeviceModel::Copy& first = prepare_copy(view, row);
  const std::size_t bytes = first.bytes();
  view.rows_changed();
  EXPECT_EQ(view.find_copy(row.name), nullptr) << "kept across changed rows";
  EXPECT_THROW(prepared_copy(view, row), Error);
  EXPECT_EQ(prepare_copy(view, row).bytes(), bytes);
}

TEST_P(ModelCopyTest, ACentredCopyOfAnUncentredModelIsOneRefusal) {
  DISTANCIES_REQUIRE_GPU();
  const ModelCopyRow& row = model_copy(GetParam());
  if (!centred_row(row)) GTEST_SKIP() << row.name << " is not a centred copy";
  const CentreSetting off("off");
  const Model m = make_synthetic_model(2003, 50, fresh_seed(), make_family("aniso:0.9", 50));
  DeviceModel dm = upload_model(m);
  try {
    prepare_copy(dm, row);
    ADD_FAILURE() << "made on an uncentred model";
  } catch (const Error& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find(row.name), std::string::npos) << why;
    EXPECT_NE(why.find("DISTANCIES_CENTRE=off"), std::string::npos) << why;
  }
  EXPECT_EQ(dm.find_copy(row.name), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Registry, ModelCopyTest, ::testing::ValuesIn(names_of_model_copies()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The searchers prepare what a plan or a scan reads, before they launch: each one-query pipeline
// its plan's copy (or its centred form), each batch pipeline its scan's copy; nothing else.
TEST(ModelCopies, TheSearchersPrepareWhatTheyRead) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = make_synthetic_model(4001, 50, fresh_seed(), make_family("aniso:0.9", 50));
  const std::vector<float> q(m.row(3), m.row(3) + m.dim);
  const float qn = vector_norm(q.data(), m.dim);
  for (const Pipeline& p : pipelines()) {
    SCOPED_TRACE(p.name);
    DeviceModel dm = upload_model(m);
    GpuSearcher s(dm, &m);
    s.search(p, q.data(), qn, 10);
    const Plan plan = make_plan(p, static_cast<int>(m.rows), m.dim, 10);
    if (plan.copy) {
      EXPECT_TRUE(keeps_copy(dm, *plan.copy)) << "its plan's copy " << plan.copy->name << " was not prepared";
    }
  }
  for (const BatchPipeline& p : batch_pipelines()) {
    if (p.per_query_pipeline || !p.scan_row->copy_row) continue;
    if (batch_scan_refusal(*p.scan_row, m.dim, 64, device_status().props.major)) continue;
    SCOPED_TRACE(p.name);
    DeviceModel dm = upload_model(m);
    BatchSearcher bs(dm);
    bs.search(p, q.data(), &qn, 1, 10);
    EXPECT_TRUE(keeps_copy(dm, *p.scan_row->copy_row)) << "its scan's copy " << p.scan_row->copy << " was not prepared";
  }
}

}  // namespace
