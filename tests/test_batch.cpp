// Batched search beyond the registry-driven suites (test_batch_pipelines.cpp): ties the
// certificate cannot break, seeded thresholds, the filtered scan's walks and overflow, refusals,
// splits, out-of-memory, the policies and the int8 copy. GPU tests skip, visibly, without a GPU.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "batch_check.hpp"
#include "gpu_skip.hpp"
#include "harness/embeddings/batch_search.hpp"
#include "kernels/common/ranking.hpp"
#include "oracle_check.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/device.hpp"
#include "runtime/device_model.hpp"
#include "test_models.hpp"
#include "variants/embeddings/batch_scans.hpp"
#include "variants/embeddings/model_copies.hpp"
#include "variants/embeddings/precision.hpp"
#include "variants/embeddings/registry.hpp"

using namespace distancies;
using namespace distancies::testing;

// Exact ties across the whole candidate set: 150 copies of row 0 and the query is row 0, so
// the k-th and the K-th candidates are equal and no bound can certify: the fallback answers
// (the filtered scans' with their wide re-rank off; WideRerankAnswersFromTheCandidates has it on).
TEST(BatchSearch, UncertifiableQueriesFallBackToExact) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = random_model({5000, 300, seed, 0, 300});
  DeviceModel dm = upload_model(m);
  BatchSearcher::Options narrow;
  narrow.wide_rerank = false;
  BatchSearcher bs(dm, narrow);
  Batch b = random_batch(m, 3, seed);
  std::memcpy(b.q.data(), m.row(0), m.dim * sizeof(float));  // query 0 sits on the ties
  b.norms[0] = m.norms[0];
  for (const char* name :
       {"batch_tf32", "batch_bf16", "batch_sgemm", "batch_f16_fused", "batch_f16_filter", "batch_i8_filter"}) {
    SCOPED_TRACE(name);
    const auto got = bs.search(batch_pipeline(name), b.q.data(), b.norms.data(), 3, 10);
    EXPECT_GE(bs.last_fallbacks(), 1) << "the tie cannot be certified";
    EXPECT_EQ(bs.last_widened(), 0);
    expect_batch_exact(m, dm, b, got, 10);
    const auto oracle = oracle_search(m, b.q.data(), 10);
    for (int r = 0; r < 10; ++r) EXPECT_EQ(got[0][r].row, oracle[r].row) << "ties go to the lower row";
  }
}

namespace {

// Planted rows no K candidates can certify: 150 exact copies of row 0 (rows 13, 26 ... 1950) and
// 300 near-duplicates of row 5 (rows 3000 ... 3299, moved by 1e-5 of its length: within any 16- or
// 8-bit bound); queries 0 and 1, and the last two, ask for rows 0 and 5; the others are random.
struct PlantedTies {
  Model m;
  Batch b;
};
PlantedTies planted_ties(std::int64_t rows, std::uint32_t seed, int batch = 4) {
  PlantedTies t{random_model({rows, 300, seed, 0, 150}), {}};
  Model& m = t.m;
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (int i = 0; i < 300; ++i) {
    float* v = m.vectors.data() + (3000 + i) * m.ld;
    std::memcpy(v, m.row(5), m.dim * sizeof(float));
    for (int j = 0; j < m.dim; ++j) v[j] += 1e-5f * m.norms[5] * g(rng) / std::sqrt(float(m.dim));
    m.norms[3000 + i] = vector_norm(v, m.dim);
  }
  t.b = random_batch(m, batch, seed);
  for (const int q : {0, 1, batch - 2, batch - 1}) {
    const std::int64_t row = q % 2 == 0 ? 0 : 5;
    std::memcpy(t.b.q.data() + static_cast<std::size_t>(q) * m.dim, m.row(row), m.dim * sizeof(float));
    t.b.norms[q] = m.norms[row];
  }
  return t;
}

// The filtered pipelines this device runs (the others print why not).
std::vector<const BatchPipeline*> filtered_pipelines(int dim) {
  std::vector<const BatchPipeline*> out;
  for (const char* name : {"batch_f16_filter", "batch_i8_filter"}) {
    const BatchPipeline& p = batch_pipeline(name);
    if (const auto no =
            batch_scan_refusal(*p.scan_row, dim, BatchPolicy::candidates(10), device_status().props.major)) {
      std::cout << "[ SKIPPED  ] " << name << ": " << no->why << "\n";
      continue;
    }
    out.push_back(&p);
  }
  return out;
}

}  // namespace

// The wide re-rank: a query whose K best candidates cannot certify its top k (the planted ties)
// is answered from every candidate its buffer holds, with no fallback, exactly (the oracle,
// `fused` bit for bit, ties to the lower row); on a model short enough to append every row, there
// in a pass of two query groups (each re-ranked before the next reuses the buffers), and on one
// long enough to seed thresholds from a sample.
TEST(BatchSearch, WideRerankAnswersFromTheCandidates) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int groups = filter_scan_max_queries() + 76;
  for (const std::int64_t rows : {5000ll, 200003ll}) {
    const int batch = rows == 5000 ? groups : 4;
    SCOPED_TRACE("rows " + std::to_string(rows) + ", batch " + std::to_string(batch));
    const PlantedTies t = planted_ties(rows, seed, batch);
    DeviceModel dm = upload_model(t.m);
    for (const BatchPipeline* p : filtered_pipelines(t.m.dim)) {
      SCOPED_TRACE(p->name);
      BatchSearcher::Options o;
      o.trace = true;
      BatchSearcher bs(dm, o);
      const auto got = bs.search(*p, t.b.q.data(), t.b.norms.data(), batch, 10);
      EXPECT_EQ(bs.last_fallbacks(), 0);
      EXPECT_EQ(bs.last_sub_batch(), batch) << "one pass";
      EXPECT_GE(bs.last_widened(), batch > 4 ? 4 : 2) << "the planted queries are answered from their candidates";
      if (rows == 5000) {
        // The copies of row 0 are answered by the wide re-rank's first stage (its best 256 keys,
        // the 257th a random row far below them) wherever the query has more candidates than
        // wide_first_from(), else by the second; the near-duplicates of row 5 always need every candidate.
        const auto& tr = bs.last_trace();
        ASSERT_EQ(tr.size(), static_cast<std::size_t>(batch));
        for (const int q : {0, batch - 2})
          EXPECT_EQ(tr[q].status, static_cast<unsigned>(tr[q].candidates) > wide_first_from() ? -2 : -1)
              << "query " << q << ", " << tr[q].candidates;
        for (const int q : {1, batch - 1}) EXPECT_EQ(tr[q].status, -1) << "query " << q;
      }
      expect_batch_exact(t.m, dm, t.b, got, 10);
      const auto oracle = oracle_search(t.m, t.b.q.data(), 10);
      for (int r = 0; r < 10; ++r) EXPECT_EQ(got[0][r].row, oracle[r].row) << "ties go to the lower row";
    }
  }
}

// The same planted ties with the wide re-rank off: its K candidates cannot certify them, so the
// fallback redoes both, exactly (what the wide re-rank saves; under compute-sanitizer initcheck
// the fallback's cuBLAS tiles are the known false positive: docs/batch.md, "Known, left alone").
TEST(BatchSearch, WideRerankOffRedoesThePlantedTies) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PlantedTies t = planted_ties(200003, seed);
  DeviceModel dm = upload_model(t.m);
  for (const BatchPipeline* p : filtered_pipelines(t.m.dim)) {
    SCOPED_TRACE(p->name);
    BatchSearcher::Options narrow;
    narrow.wide_rerank = false;
    BatchSearcher bs(dm, narrow);
    const auto got = bs.search(*p, t.b.q.data(), t.b.norms.data(), 4, 10);
    EXPECT_GE(bs.last_fallbacks(), 2) << "the planted rows must defeat the K candidates' certificate";
    EXPECT_EQ(bs.last_widened(), 0);
    expect_batch_exact(t.m, dm, t.b, got, 10);
  }
}

// The certificate trace (Options::trace): one entry a query; the certified ones pass the
// certificate on their operands and the others do not; the k-th exact operand is the answer's k-th
// similarity; the filtered scans report their candidates. On the planted ties (two queries the
// certificate cannot pass, answered by the wide re-rank) and random queries, one and two groups.
TEST(BatchSearch, TraceHoldsEachQuerysCertificate) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const PlantedTies t = planted_ties(200003, seed);
  DeviceModel dm = upload_model(t.m);
  BatchSearcher::Options o;
  o.trace = true;
  BatchSearcher bs(dm, o);
  BatchSearcher plain(dm);
  for (const BatchPipeline* p : filtered_pipelines(t.m.dim)) {
    SCOPED_TRACE(p->name);
    const auto got = bs.search(*p, t.b.q.data(), t.b.norms.data(), 4, 10);
    EXPECT_TRUE(plain.last_trace().empty());
    const auto& tr = bs.last_trace();
    ASSERT_EQ(tr.size(), 4u);
    int failed = 0;
    for (std::size_t q = 0; q < tr.size(); ++q) {
      const bool passes = certifies(tr[q].kth_exact, tr[q].last_key, tr[q].bound, tr[q].all_rows_seen, false);
      EXPECT_EQ(passes, tr[q].status == 0) << "query " << q;
      failed += !passes;
      EXPECT_GE(tr[q].candidates, 0) << "a filtered scan counts its candidates";
      if (tr[q].status == 0) {
        EXPECT_EQ(tr[q].kth_exact, got[q][9].sim) << "query " << q;
      }
      EXPECT_GE(tr[q].bound, 0.0f);  // 0 where the keys are upper bounds themselves (the int8 walk's)
    }
    EXPECT_EQ(failed, bs.last_widened() + bs.last_fallbacks());
    EXPECT_GE(failed, 2) << "the planted ties defeat the certificate";
    expect_batch_exact(t.m, dm, t.b, got, 10);
  }
}

// A model long enough for the fused and filtered scans to seed their thresholds from a first pass
// over a sample: copies of one row spread in and out of the sample, asked for by a query in each
// of the fused scan's two launches (B = 130; the filtered scan's two query groups), come back in
// row order; every query equals the oracle and `fused`.
TEST(BatchSearch, SeededThresholdsKeepEveryAnswer) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int k = 30, batch = 130;
  Model m = random_model({400009, 50, seed, 0, 0});
  ASSERT_TRUE(tensor_scan_seeds(batch, m.dim, BatchPolicy::candidates(k), m.rows));
  ASSERT_TRUE(filter_scan_seeds(m.rows, BatchPolicy::candidates(k)));
  const std::vector<int> copies = plant_copies_of_row_7(m, 9973);
  DeviceModel dm = upload_model(m);
  BatchSearcher bs(dm);
  Batch b = random_batch(m, batch, seed);
  for (int q : {5, 129}) {
    std::memcpy(b.q.data() + static_cast<std::size_t>(q) * m.dim, m.row(7), m.dim * sizeof(float));
    b.norms[q] = m.norms[7];
  }
  for (const char* name : {"batch_f16_fused", "batch_f16_filter", "batch_i8_filter"}) {
    SCOPED_TRACE(name);
    const auto got = bs.search(batch_pipeline(name), b.q.data(), b.norms.data(), batch, k);
    expect_batch_exact(m, dm, b, got, k);
    // A random query whose K-th key lies within the keys' bound of its k-th exact similarity fails
    // its certificate whatever the seed (a fallback, answered exactly above): rare, not none. A
    // seed that overflowed the buffers would send most queries there.
    EXPECT_LE(bs.last_fallbacks(), batch / 100);
    for (int q : {5, 129})
      for (int r = 0; r < k; ++r) EXPECT_EQ(got[q][r].row, copies[r]) << "query " << q << " rank " << r;
  }
}

// The filtered scan's wgmma walk (kernels/embeddings/wgmma_filter.cuh; B >= 17 on a 9.0 device):
// blocks of 64, 128 and 256 queries, one and several query groups (B = 40, 100, 129, 300, 513,
// 1,024), D = 300 (the last block's fourth MMA step skipped), 50 and 320 (one to five 64-column
// blocks, the last zero-filled past the row), rows not a multiple of its 64-row tile, zero rows,
// and 41 copies of row 7 spread over the tiles that query 5 asks for.
TEST(BatchSearch, FilteredScanGemmWalkMatchesOracle) {
  DISTANCIES_REQUIRE_GPU();
  const cudaDeviceProp& p = device_status().props;
  const bool hopper = p.major == 9 && p.minor == 0 && std::getenv("DISTANCIES_FILTER_WALK") == nullptr;
  struct Case {
    ModelSpec spec;
    int batch, k;
  };
  const Case cases[] = {{{20011, 300, 0, 64, 0}, 300, 10},
                        {{9001, 50, 0, 0, 0}, 513, 16},
                        {{7777, 320, 0, 0, 0}, 129, 10},
                        {{70001, 300, 0, 0, 0}, 1024, 10},
                        {{30011, 300, 0, 16, 0}, 40, 10},
                        {{12007, 50, 0, 0, 0}, 100, 20},
                        // Too few rows to seed: every score is a candidate, so a thread's
                        // appends take many rounds of its stack every tile.
                        {{2003, 100, 0, 0, 0}, 200, 10}};
  for (const Case& c : cases) {
    const std::uint32_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", B = " + std::to_string(c.batch) +
                 ", D = " + std::to_string(c.spec.dim));
    if (hopper) {
      EXPECT_EQ(filter_scan_walk(c.batch, c.spec.dim), "gemm");
    } else {
      std::cout << "[ NOTE     ] not a 9.0 device or a walk forced: the filter pass takes the "
                << filter_scan_walk(c.batch, c.spec.dim) << " walk, not gemm\n";
    }
    ModelSpec spec = c.spec;
    spec.seed = seed;
    Model m = random_model(spec);
    const std::vector<int> copies = plant_copies_of_row_7(m, static_cast<int>(m.rows / 45));
    DeviceModel dm = upload_model(m);
    BatchSearcher bs(dm);
    Batch b = random_batch(m, c.batch, seed);
    std::memcpy(b.q.data() + 5 * m.dim, m.row(7), m.dim * sizeof(float));
    b.norms[5] = m.norms[7];
    // The int8 walk (wgmma_filter_i8.cuh) over the same cases: 64-, 128- and 256-query blocks,
    // one to three 128-column blocks (D = 50, 100, 300, 320; two MMA steps in the last or four).
    for (const char* name : {"batch_f16_filter", "batch_i8_filter"}) {
      SCOPED_TRACE(name);
      const auto got = bs.search(batch_pipeline(name), b.q.data(), b.norms.data(), c.batch, c.k);
      expect_batch_exact(m, dm, b, got, c.k);
      for (int r = 0; r < c.k; ++r) EXPECT_EQ(got[5][r].row, copies[r]) << "rank " << r;
    }
  }
}

// The walk is refused where it cannot run or is slower: D > 320 and B <= 16 take the mma.sync
// walks; on a 9.0 device (the walk's sm_90a code) B = 17 and 64 take it.
TEST(BatchSearch, FilteredScanGemmWalkOnlyWhereItFits) {
  DISTANCIES_REQUIRE_GPU();
  EXPECT_NE(filter_scan_walk(300, 321), "gemm");
  if (std::getenv("DISTANCIES_FILTER_WALK") != nullptr) {
    std::cout << "[ NOTE     ] a walk forced (DISTANCIES_FILTER_WALK): the batch sizes' walks not checked\n";
    return;
  }
  EXPECT_NE(filter_scan_walk(16, 300), "gemm");
  EXPECT_NE(filter_scan_walk(1, 300), "gemm");
  const cudaDeviceProp& p = device_status().props;
  if (p.major == 9 && p.minor == 0) {
    EXPECT_EQ(filter_scan_walk(17, 300), "gemm");
    EXPECT_EQ(filter_scan_walk(64, 300), "gemm");
  } else {
    EXPECT_NE(filter_scan_walk(64, 300), "gemm");
    std::cout << "[ NOTE     ] not a 9.0 device: B = 17 ... 64 not checked to take the gemm walk\n";
  }
}

// Every row the same: every score reaches the seeded threshold, so each query's candidate
// buffer overflows; the scan says so (status) and the fallback answers, rows in order.
TEST(BatchSearch, FilteredScanOverflowFallsBackToExact) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  Model m = random_model({100003, 16, seed, 0, 0});
  for (long long r = 1; r < m.rows; ++r) {
    std::memcpy(m.vectors.data() + r * m.ld, m.row(0), m.dim * sizeof(float));
    m.norms[r] = m.norms[0];
  }
  const int K = BatchPolicy::candidates(10);
  ASSERT_TRUE(filter_scan_seeds(m.rows, K));
  ASSERT_LT(filter_scan_capacity(m.rows, K), m.rows);
  DeviceModel dm = upload_model(m);
  BatchSearcher bs(dm);
  const Batch b = random_batch(m, 3, seed);
  for (const char* name : {"batch_f16_filter", "batch_i8_filter"}) {
    SCOPED_TRACE(name);
    const auto got = bs.search(batch_pipeline(name), b.q.data(), b.norms.data(), 3, 10);
    EXPECT_EQ(bs.last_fallbacks(), 3);
    expect_batch_exact(m, dm, b, got, 10);
    for (int q = 0; q < 3; ++q)
      for (int r = 0; r < 10; ++r) EXPECT_EQ(got[q][r].row, r) << "query " << q;
  }
}

// A row longer than the fused or filtered scan's shared memory holds: its queries are refused,
// counted, and answered exactly by the fallback.
TEST(BatchSearch, FusedScanRefusesRowsTooLongForSharedMemory) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  const Model m = random_model({2003, 7000, seed, 0, 0});
  ASSERT_TRUE(tensor_scan_refusal(m.dim, BatchPolicy::candidates(10)));
  EXPECT_FALSE(tensor_scan_refusal(300, BatchPolicy::candidates(128)));
  ASSERT_TRUE(filter_scan_refusal(m.dim));
  EXPECT_FALSE(filter_scan_refusal(1000));
  DeviceModel dm = upload_model(m);
  BatchSearcher bs(dm);
  const Batch b = random_batch(m, 3, seed);
  for (const char* name : {"batch_f16_fused", "batch_f16_filter", "batch_i8_filter"}) {
    SCOPED_TRACE(name);
    const auto got = bs.search(batch_pipeline(name), b.q.data(), b.norms.data(), 3, 10);
    EXPECT_EQ(bs.last_fallbacks(), 3);
    EXPECT_EQ(bs.last_refused(), 3);
    expect_batch_exact(m, dm, b, got, 10);
  }
}

// A scratch limit below what the batch needs: the batch is split, results unchanged; below
// what one query needs: one clear error.
TEST(BatchSearch, SplitsABatchThatDoesNotFit) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Model m = random_model({30011, 64, seed, 0, 0});
  DeviceModel dm = upload_model(m);
  const Batch b = random_batch(m, 100, seed);
  BatchSearcher::Options o;
  o.tile_rows = 4096;
  o.scratch_limit = batch_workspace_bytes(GemmInput::TF32, Storage::F32, 30, m.dim, m.ld, 10, 4096);
  BatchSearcher bs(dm, o);
  const auto got = bs.search(batch_pipeline("batch_tf32"), b.q.data(), b.norms.data(), 100, 10);
  EXPECT_LE(bs.last_sub_batch(), 30);
  EXPECT_GE(bs.last_sub_batch(), 1);
  expect_batch_exact(m, dm, b, got, 10);

  // Policy tiles: the last, smaller pass wants more slices per query than the first had.
  BatchSearcher::Options po;
  po.scratch_limit =
      batch_workspace_bytes(GemmInput::TF32, Storage::F32, 6, m.dim, m.ld, 10, BatchPolicy::tile_rows(11));
  BatchSearcher uneven(dm, po);
  const Batch b11 = random_batch(m, 11, seed + 1);
  const auto got11 = uneven.search(batch_pipeline("batch_tf32"), b11.q.data(), b11.norms.data(), 11, 10);
  EXPECT_LT(uneven.last_sub_batch(), 11);
  expect_batch_exact(m, dm, b11, got11, 10);

  o.scratch_limit = 1024;
  BatchSearcher tiny(dm, o);
  try {
    tiny.search(batch_pipeline("batch_tf32"), b.q.data(), b.norms.data(), 100, 10);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU out of memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("even one query"), std::string::npos) << e.what();
  }
}

// The GPU really full: most of its free memory taken first. The batch must split and answer
// exactly, or fail with the out-of-memory line; never crash.
TEST(BatchSearch, RealOutOfMemorySplitsOrFailsCleanly) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  const Model m = random_model({50000, 128, seed, 0, 0});
  DeviceModel dm = upload_model(m);
  const Batch b = random_batch(m, 2048, seed);
  BatchSearcher bs(dm);
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t leave =
      batch_workspace_bytes(GemmInput::TF32, Storage::F32, 2048, m.dim, m.ld, 10, BatchPolicy::tile_rows(2048)) / 3;
  DeviceBuffer hog;
  for (std::size_t slack = 0; slack < (64u << 20) && !hog.get(); slack += 2u << 20) {
    try {
      hog = DeviceBuffer(free_b - leave - slack, "test hog");
    } catch (const OutOfMemory&) {
    }
  }
  ASSERT_NE(hog.get(), nullptr) << "could not fill the GPU";
  try {
    const auto got = bs.search(batch_pipeline("batch_tf32"), b.q.data(), b.norms.data(), 2048, 10);
    EXPECT_LT(bs.last_sub_batch(), 2048) << "the whole batch could not have fit";
    hog = DeviceBuffer();
    Batch few;  // check a sample of the answers (the oracle on 2048 queries is slow)
    std::vector<std::vector<Hit>> some;
    for (int i = 0; i < 2048; i += 257) {
      few.q.insert(few.q.end(), b.q.begin() + i * m.dim, b.q.begin() + (i + 1) * m.dim);
      few.norms.push_back(b.norms[i]);
      some.push_back(got[i]);
    }
    expect_batch_exact(m, dm, few, some, 10);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("GPU out of memory"), std::string::npos) << e.what();
  }
}

// Parsed queries: each query's own words are excluded unless kept.
TEST(BatchSearch, DropsEachQuerysOwnWords) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = random_model({3000, 50, 11, 0, 0});
  DeviceModel dm = upload_model(m);
  BatchSearcher bs(dm);
  const std::vector<Query> qs = {make_query(m, m.words[5]), make_query(m, m.words[7] + " - " + m.words[9])};
  const auto got = bs.search(batch_pipeline("batch_tf32"), qs, 5, false);
  ASSERT_EQ(got.size(), 2u);
  for (std::size_t i = 0; i < qs.size(); ++i) {
    EXPECT_EQ(got[i].size(), 5u);
    expect_matches_oracle(m, qs[i].vector.data(), got[i], 5, qs[i].word_rows);
  }
  const auto kept = bs.search(batch_pipeline("batch_tf32"), qs, 5, true);
  EXPECT_EQ(kept[0][0].row, 5) << "a word is its own nearest neighbour when kept";
}

TEST(BatchSearch, EmptyBatchAndBadK) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = random_model({100, 16, 3, 0, 0});
  DeviceModel dm = upload_model(m);
  BatchSearcher bs(dm);
  EXPECT_TRUE(bs.search(batch_pipeline("batch_tf32"), nullptr, nullptr, 0, 10).empty());
  float q[16] = {1}, n = 1;
  EXPECT_THROW(bs.search(batch_pipeline("batch_tf32"), q, &n, 1, 0), Error);
}

// The bound, checked on the CPU against emulated operand rounding: |fp32-path cosine -
// rounded-operand cosine| stays below gemm_error_bound for random and adversarial rows.
namespace {
float round_bf16(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  std::memcpy(&x, &u, 4);
  return x;
}
float truncate_tf32(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u &= 0xFFFFE000u;
  std::memcpy(&x, &u, 4);
  return x;
}
}  // namespace

TEST(GemmErrorBound, CoversEmulatedRounding) {
  const int dim = 300;
  std::mt19937 rng(fresh_seed());
  std::normal_distribution<float> g(0, 1);
  for (GemmInput in : {GemmInput::TF32, GemmInput::BF16}) {
    const double bound = gemm_error_bound(in, dim, 0.1f);
    double worst = 0;
    for (int t = 0; t < 200; ++t) {
      std::vector<float> q(dim), x(dim);
      for (int j = 0; j < dim; ++j) {
        q[j] = g(rng);
        x[j] = t % 2 ? std::fabs(g(rng)) * (q[j] > 0 ? 1 : -1) : g(rng);  // odd t: every term adds up
      }
      const double qn = vector_norm(q.data(), dim), xn = vector_norm(x.data(), dim);
      double exact = 0, approx = 0;
      for (int j = 0; j < dim; ++j) {
        exact += double(q[j]) * x[j];
        const float qj = static_cast<float>(q[j] / qn);
        approx += in == GemmInput::BF16 ? double(round_bf16(qj)) * round_bf16(x[j])
                                        : double(truncate_tf32(qj)) * truncate_tf32(x[j]);
      }
      worst = std::max(worst, std::fabs(exact / (qn * xn) - approx / xn));
    }
    EXPECT_LT(worst, bound) << gemm_input_name(in);
    EXPECT_GT(worst, bound / 512) << gemm_input_name(in) << ": the bound is far looser than it needs to be";
  }
  EXPECT_LT(gemm_error_bound(GemmInput::F32, dim, 1), gemm_error_bound(GemmInput::F16, dim, 1));
  EXPECT_LT(gemm_error_bound(GemmInput::F16, dim, 1), gemm_error_bound(GemmInput::TF32, dim, 1));
  EXPECT_LT(gemm_error_bound(GemmInput::TF32, dim, 1), gemm_error_bound(GemmInput::BF16, dim, 1));
}

TEST(BatchPolicy, TilesAndSlicesStayInRange) {
  for (int b : {1, 16, 128, 1024, 8192, 100000}) {
    const int t = BatchPolicy::tile_rows(b);
    EXPECT_EQ(t % 128, 0);
    EXPECT_GE(t, 1024);
    EXPECT_LE(static_cast<long long>(t) * b,
              std::max(128ll << 20, 1024ll * b) + 128ll * b);  // budget, rounded up to 128 rows
    const int s = BatchPolicy::slices(b, t);
    EXPECT_GE(s, 1);
    EXPECT_LE(s, t / 1024);
  }
  EXPECT_EQ(BatchPolicy::candidates(10), 64);
  EXPECT_EQ(BatchPolicy::candidates(100), 128);
  EXPECT_EQ(BatchPolicy::candidates(128), 128);
}

// The filtered scan's host-side plan (no GPU needed): a seed only where the model is long enough,
// a buffer that holds the expected candidates (K rows / sample) four times over, and every row
// when there is no seed; queries whose fragments do not fit are refused with a reason.
TEST(FilterScanPolicy, SampleCapacityAndRefusal) {
  for (int K : {64, 128}) {
    SCOPED_TRACE("K " + std::to_string(K));
    EXPECT_FALSE(filter_scan_seeds(1000, K));
    EXPECT_EQ(filter_scan_capacity(1000, K), 1000);  // every row a candidate
    EXPECT_EQ(filter_scan_capacity(0, K), 1);
    for (long long rows : {100003ll, 2196016ll, 1ll << 31}) {
      SCOPED_TRACE("rows " + std::to_string(rows));
      ASSERT_TRUE(filter_scan_seeds(rows, K));
      const long long cap = filter_scan_capacity(rows, K);
      const double sample = std::ceil(std::sqrt(double(K) * double(rows)) / 16) * 16;  // about sqrt(K rows)
      EXPECT_GE(cap, static_cast<long long>(4 * K * rows / sample));
      EXPECT_GE(cap, static_cast<long long>(sample));
      EXPECT_LT(cap, rows);
    }
  }
  // 741 groups = 11,856 sampled rows; ceil(64 x 2,196,016 / 11,856) = 11,855 expected candidates.
  EXPECT_EQ(filter_scan_capacity(2196016, 64), 4 * 11855 + 1024);
  EXPECT_EQ(filter_scan_queries(16), 16);
  EXPECT_EQ(filter_scan_queries(100000), 1024);
  EXPECT_FALSE(filter_scan_refusal(300));
  EXPECT_FALSE(filter_scan_refusal(5000));
  EXPECT_TRUE(filter_scan_refusal(6000));  // 188 KB of one tile's fragments
  EXPECT_NE(filter_scan_refusal(7000).value_or(Refusal{}).why.find("7000-dimensional"), std::string::npos);
  // The int8 scan's buffers: a segment a block part, each a 64-row tile larger than its share, so
  // a model too short to seed (every row of a part's tiles appended) never overflows one.
  for (long long rows : {1000ll, 4099ll, 2196016ll}) {
    const long long cap = filter_scan_i8_capacity(rows, 64);
    for (int parts : {1, 33, 132, tiled_i8::kMaxSegments}) {
      const long long tiles = (rows + 63) / 64, most = (tiles + parts - 1) / parts * 64;  // a part's rows at most
      if (!filter_scan_seeds(rows, 64)) {
        EXPECT_GE(cap / parts, most) << rows << " rows, " << parts << " parts";
      }
      EXPECT_GE(cap / parts, filter_scan_capacity(rows, 64) / parts + 64);
    }
  }
  EXPECT_EQ(filter_scan_i8_ldg(300), 304);
  EXPECT_EQ(filter_scan_i8_ldg(7), 16);
  EXPECT_TRUE(filter_scan_i8_refusal(300, 8));  // wgmma s8: 9.0 only
  EXPECT_TRUE(filter_scan_i8_refusal(400, 9));  // rows of at most 320 columns
}

// The tiled int8 copy (kernels/embeddings/tiled_i8.cuh) and the int8 queries: for every query and
// every row, the fp64 cosine of the normalised query with the row lies within the bound the int8
// walk assumes: s_q I / U (U_lo or U_hi, whichever is further) -/+ (A_q nu_max + B_q), I the
// codes' dot product. Rows: random, zero, one-hot, spiky (one element 1,000 x the rest), of norms
// 1e-20 ... 1e20; D = 300 (codes padded to 304 with zeros) and 7. The order is a permutation,
// every code within +-127.
TEST(TiledI8Copy, EveryScoreWithinItsBound) {
  DISTANCIES_REQUIRE_GPU();
  for (const int dim : {300, 7}) {
    const std::uint32_t seed = fresh_seed();
    SCOPED_TRACE("seed " + std::to_string(seed) + ", D = " + std::to_string(dim));
    Model m = random_model({1000, dim, seed, 16, 0});
    plant_hostile_rows(m, 400, 20.0f);  // one-hot, spiky, norms 1e-20 ... 1e20
    DeviceModel dm = upload_model(m);
    const TiledI8Copy& t = prepared_tiled_i8(dm);
    const int ldg = t.ldg, rows = static_cast<int>(m.rows);
    ASSERT_EQ(ldg, filter_scan_i8_ldg(dim));
    const HostTiledI8 copy = download_tiled_i8(t, rows);
    const std::vector<signed char>& codes = copy.codes;
    const std::vector<int>& order = copy.order;
    const std::vector<float4>& tile = copy.tiles;
    std::vector<int> seen(rows, 0);
    for (int r : order) {
      ASSERT_TRUE(r >= 0 && r < rows);
      ++seen[r];
    }
    for (int r = 0; r < rows; ++r) ASSERT_EQ(seen[r], 1) << "row " << r << " not once in the order";
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < ldg; ++j) {
        const int c = codes[static_cast<std::size_t>(r) * ldg + j];
        ASSERT_TRUE(c >= -127 && c <= 127);
        if (j >= dim) {
          ASSERT_EQ(c, 0) << "padding";
        }
      }
    for (const float4& u : tile) ASSERT_LE(u.x, u.y);

    const int nq = 24;
    Batch b = random_batch(m, nq, seed);
    std::memcpy(b.q.data(), m.row(120), dim * sizeof(float));  // a one-hot query
    b.norms[0] = m.norms[120];
    const HostI8Queries iq = tiled_i8_queries_of(b, dim, ldg);
    const std::vector<signed char>& qc = iq.codes;
    const std::vector<float4>& qb = iq.bounds;
    long long checked = 0;
    for (int q = 0; q < nq; ++q) {
      const float inv = 1.0f / b.norms[q];
      for (int r = 0; r < rows; ++r) {
        const float* x = m.row(order[r]);
        double dot = 0, xx = 0;
        for (int j = 0; j < dim; ++j)
          dot += static_cast<double>(b.q[q * dim + j] * inv) * x[j], xx += double(x[j]) * x[j];
        if (xx == 0) continue;  // a zero row scores 0 on every path
        long long I = 0;
        for (int j = 0; j < ldg; ++j) I += qc[q * ldg + j] * codes[static_cast<std::size_t>(r) * ldg + j];
        const float4 u = tile[r / 64];
        const double s = qb[q].x, e = double(qb[q].y) * u.z + qb[q].z;
        const double cosine = dot / std::sqrt(xx);
        const double hi = s * I / (I >= 0 ? u.x : u.y) + e, lo = s * I / (I >= 0 ? u.y : u.x) - e;
        ASSERT_LE(cosine, hi + 1e-12) << "query " << q << ", sorted row " << r;
        ASSERT_GE(cosine, lo - 1e-12) << "query " << q << ", sorted row " << r;
        ++checked;
      }
    }
    EXPECT_GT(checked, nq * (rows - 64));
  }
}

namespace {
// The elements of `v` as the GEMM input `g` stores them (fp32, bf16 or fp16), as raw bytes.
std::vector<unsigned char> as_gemm_input(const std::vector<float>& v, GemmInput g) {
  const std::size_t each = g == GemmInput::BF16 || g == GemmInput::F16 ? 2 : 4;
  std::vector<unsigned char> out(v.size() * each);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (g == GemmInput::BF16) {
      const __nv_bfloat16 h = __float2bfloat16(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else if (g == GemmInput::F16) {
      const __half h = __float2half(v[i]);
      std::memcpy(out.data() + 2 * i, &h, 2);
    } else {
      std::memcpy(out.data() + 4 * i, &v[i], 4);
    }
  }
  return out;
}
}  // namespace

// compute-sanitizer's initcheck reports the scores of a B = 3 tile as unwritten where the
// selection reads them (docs/batch.md, "Known, left alone"). The GEMM behind every cuBLAS tile,
// at that shape and leading dimension, into a buffer filled with NaN first, writes each of its
// m x B scores, each near the fp64 dot (loosely: the certificate's tests hold the tight bound).
TEST(GemmTileScores, WritesEveryScoreInitcheckCallsUnwritten) {
  DISTANCIES_REQUIRE_GPU();
  const std::uint32_t seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int batch = 3;
  const Model m = random_model({5000, 300, seed, 0, 0});
  const int ldc = BatchPolicy::tile_rows(batch), rows = static_cast<int>(std::min<std::int64_t>(m.rows, ldc));
  const Batch b = random_batch(m, batch, seed);
  std::vector<float> tile(m.vectors.data(), m.vectors.data() + static_cast<std::size_t>(rows) * m.ld);
  std::vector<float> queries(static_cast<std::size_t>(m.ld) * batch, 0.0f);  // ld x B, padding zero
  for (int j = 0; j < batch; ++j)
    std::memcpy(queries.data() + static_cast<std::size_t>(j) * m.ld, b.q.data() + static_cast<std::size_t>(j) * m.dim,
                m.dim * sizeof(float));
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  set_batch_math_mode(h);  // the searcher's, so that cuBLAS picks the same kernels
  const struct {
    GemmInput input;
    bool half_scores;
    double tol;  // relative to sum |a_i q_i|
  } cases[] = {{GemmInput::F32, false, 1e-5},
               {GemmInput::TF32, false, 4e-3},
               {GemmInput::BF16, false, 2e-2},
               {GemmInput::F16, false, 4e-3},
               {GemmInput::F16, true, 4e-3}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(gemm_input_name(c.input)) + (c.half_scores ? ", fp16 scores" : ", fp32 scores"));
    const auto t = as_gemm_input(tile, c.input), q = as_gemm_input(queries, c.input);
    const std::size_t score_bytes = static_cast<std::size_t>(ldc) * batch * (c.half_scores ? 2 : 4);
    DeviceBuffer dt(t.size(), "tile"), dq(q.size(), "queries"), ds(score_bytes, "scores");
    CUDA_CHECK(cudaMemcpy(dt.get(), t.data(), t.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dq.get(), q.data(), q.size(), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(ds.get(), 0xff, score_bytes));  // NaN in fp32 and in fp16
    gemm_tile_scores(h, c.input, dt.get(), rows, m.ld, dq.get(), batch, ds.get(), c.half_scores, ldc);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> got(score_bytes);
    CUDA_CHECK(cudaMemcpy(got.data(), ds.get(), score_bytes, cudaMemcpyDeviceToHost));
    int unwritten = 0, off = 0;
    for (int j = 0; j < batch; ++j)
      for (int i = 0; i < rows; ++i) {
        const std::size_t at = static_cast<std::size_t>(j) * ldc + i;
        float s;
        if (c.half_scores) {
          __half hs;
          std::memcpy(&hs, got.data() + 2 * at, 2);
          s = __half2float(hs);
        } else {
          std::memcpy(&s, got.data() + 4 * at, 4);
        }
        double dot = 0, mag = 0;
        for (int d = 0; d < m.dim; ++d) {
          const double p = double(m.row(i)[d]) * b.q[static_cast<std::size_t>(j) * m.dim + d];
          dot += p, mag += std::fabs(p);
        }
        if (!std::isfinite(s))
          ++unwritten;
        else if (std::fabs(s - dot) > c.tol * mag + 1e-6)
          ++off;
      }
    EXPECT_EQ(unwritten, 0) << "scores left as the NaN they were filled with";
    EXPECT_EQ(off, 0) << "scores far from the fp64 dot";
  }
  cublasDestroy(h);
}
