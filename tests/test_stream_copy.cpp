// Streaming the reduced copy (harness/scale/host_copy.hpp): a one-query pipeline that scans an
// int8 / fp16 / bf16 copy streams that copy from page-locked host memory and re-ranks its
// candidates' fp32 rows in place there; the answer equals the resident search's bit for bit, on
// every data family (centred chunks included), with ties across chunk borders and zero rows.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gpu_skip.hpp"
#include "harness/scale/stream_search.hpp"
#include "harness/synthetic.hpp"
#include "oracle_check.hpp"
#include "runtime/device_model.hpp"
#include "runtime/error.hpp"
#include "test_models.hpp"

using namespace distancies;
using namespace distancies::testing;

namespace {

const char* const kReduced[] = {"fused_i8", "fused_f16", "fused_bf16"};

void expect_same(const std::vector<Hit>& got, const std::vector<Hit>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].row, want[i].row) << what << ", rank " << i;
    EXPECT_EQ(got[i].sim, want[i].sim) << what << ", rank " << i;
  }
}

// Bytes a row of each copy moves: codes (the copy's leading dimension), int8's scale, the norm;
// a centred int8 chunk adds its row correction.
std::size_t copy_row_bytes(const Pipeline& p, int dim, bool centred) {
  const std::size_t codes = static_cast<std::size_t>(storage_leading_dim(p.storage, dim)) * storage_bytes(p.storage);
  const bool i8 = p.storage == Storage::I8;
  return codes + (i8 ? 4 : 0) + (i8 && centred ? 4 : 0) + 4;
}

// A random model resident (the reference) and page-locked, streamed in chunks of chunk_rows, and
// a random query from the same seed.
struct Streamed {
  Streamed(const ModelSpec& spec, std::int64_t chunk_rows)
      : m(random_model(spec)),
        dm(upload_model(m)),
        resident(dm, &m),
        pm(PinnedModel::register_model(m)),
        st(pm.rows(), options(chunk_rows)),
        q(random_query(spec.dim, spec.seed)),
        qn(vector_norm(q.data(), spec.dim)) {}
  static StreamOptions options(std::int64_t chunk_rows) {
    StreamOptions o;
    o.chunk_rows = chunk_rows;
    return o;
  }
  Model m;
  DeviceModel dm;
  GpuSearcher resident;
  PinnedModel pm;
  StreamSearcher st;
  std::vector<float> q;
  float qn;
};

}  // namespace

// 20,001 rows in chunks of 1,000 (the last one row): exact ties of row 0 every 13 rows and zero rows.
TEST(StreamCopy, ReducedPipelinesStreamTheirCopyAndEqualTheResidentSearch) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Streamed s({20001, 300, seed, 5, 40}, 1000);
  const Model& m = s.m;
  StreamSearcher& st = s.st;
  GpuSearcher& resident = s.resident;
  const std::vector<float>& q = s.q;
  const float qn = s.qn;
  for (const char* name : kReduced) {
    const Pipeline& p = pipeline(name);
    for (int k : {1, 10, 40}) {
      const std::string what = std::string(name) + " k=" + std::to_string(k);
      expect_same(st.search(p, q.data(), qn, k), resident.search(p, q.data(), qn, k), what);
      EXPECT_EQ(st.last().streamed, std::string(storage_name(p.storage)) + " copy from host memory") << what;
      EXPECT_EQ(st.last().layout.chunks, 21) << what;
      EXPECT_EQ(st.last().bytes, m.rows * copy_row_bytes(p, m.dim, st.last().centred_chunks > 0)) << what;
    }
    // The row-0 query: its ties sit in every chunk.
    const auto ties = st.search(p, m.row(0), m.norms[0], 40);
    expect_matches_oracle(m, m.row(0), ties, 40);
    expect_same(ties, resident.search(pipeline("fused"), m.row(0), m.norms[0], 40), std::string(name) + " ties");
  }
  // Asked not to: the fp32 rows, the copy made per chunk on the GPU, the same answer.
  StreamOptions o = Streamed::options(1000);
  o.reduced_from_host = false;
  StreamSearcher plain(s.pm.rows(), o);
  const auto got = plain.search(pipeline("fused_i8"), q.data(), qn, 10);
  expect_same(got, resident.search(pipeline("fused_i8"), q.data(), qn, 10), "fp32 rows");
  EXPECT_EQ(plain.last().streamed.rfind("fp32 rows", 0), 0u) << plain.last().streamed;
  EXPECT_EQ(plain.last().bytes, static_cast<std::size_t>(m.rows) * (m.ld + 1) * sizeof(float));
}

// Rows that are not page-locked have no device address: the fp32 rows are streamed, and the
// stream says why.
TEST(StreamCopy, PageableRowsStreamTheRowsAndSayWhy) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = random_model({5000, 100, seed, 2, 3});
  StreamOptions o;
  o.chunk_rows = 700;
  StreamSearcher st(host_rows(m), o);
  const auto q = random_query(m.dim, seed);
  const auto got = st.search(pipeline("fused_i8"), q.data(), vector_norm(q.data(), m.dim), 10);
  expect_matches_oracle(m, q.data(), got, 10);
  EXPECT_NE(st.last().streamed.find("not page-locked"), std::string::npos) << st.last().streamed;
}

// Every data family: the anisotropic ones centre each chunk (the int8 chunks then carry their
// row corrections), the clustered one has exact and near duplicates across chunks.
TEST(StreamCopy, EveryDataFamilyEqualsTheResidentSearch) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const std::int64_t rows = 30000;
  const int dim = 300;
  for (const std::string& name : standard_families()) {
    const DataFamily family = make_family(name, dim);
    DeviceModel dm = generate_synthetic_on_device(rows, dim, seed, 0, family);
    const Model m = download_model(dm);
    GpuSearcher resident(dm, &m);
    const PinnedModel pm = PinnedModel::register_model(m);
    StreamOptions o;
    o.chunk_rows = 4096;
    StreamSearcher st(pm.rows(), o);
    for (const char* pipe : kReduced) {
      const Pipeline& p = pipeline(pipe);
      for (std::int64_t row : {std::int64_t(17), rows - 1}) {  // a row of the model as the query: its ties
        const std::string what = name + " " + pipe + " row " + std::to_string(row);
        const auto got = st.search(p, m.row(row), m.norms[static_cast<std::size_t>(row)], 10);
        expect_same(got, resident.search(pipeline("fused"), m.row(row), m.norms[static_cast<std::size_t>(row)], 10),
                    what);
        EXPECT_EQ(st.last().streamed, std::string(storage_name(p.storage)) + " copy from host memory") << what;
        // One common direction of mean cosine >= 0.5 is well past the centring policy's |mu|^2.
        if (name.rfind("aniso:", 0) == 0) {
          EXPECT_EQ(st.last().centred_chunks, st.last().layout.chunks) << what;
        }
        if (name == "iid") {
          EXPECT_EQ(st.last().centred_chunks, 0) << what;
        }
        EXPECT_EQ(st.last().bytes, rows * copy_row_bytes(p, dim, st.last().centred_chunks > 0)) << what;
      }
    }
  }
}

// A copy that does not fit (page-locked host memory refused, injected here): the fp32 rows are
// streamed, the stream says why, the answer is the same, and the copy is not tried again.
TEST(StreamCopy, ACopyThatDoesNotFitStreamsTheRows) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Streamed s({6000, 300, seed, 2, 3}, 1000);
  const Model& m = s.m;
  StreamSearcher& st = s.st;
  GpuSearcher& resident = s.resident;
  const std::vector<float>& q = s.q;
  const float qn = s.qn;
  inject_allocation_failure(0);  // the copy's first page-locked buffer
  const auto got = st.search(pipeline("fused_i8"), q.data(), qn, 10);
  inject_allocation_failure(-1);
  expect_same(got, resident.search(pipeline("fused_i8"), q.data(), qn, 10), "copy refused");
  EXPECT_NE(st.last().streamed.find("did not fit"), std::string::npos) << st.last().streamed;
  EXPECT_EQ(st.last().bytes, static_cast<std::size_t>(m.rows) * (m.ld + 1) * sizeof(float));
  expect_same(st.search(pipeline("fused_i8"), q.data(), qn, 10), got, "again");
  EXPECT_NE(st.last().streamed.find("did not fit"), std::string::npos) << st.last().streamed;
}
