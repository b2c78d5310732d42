// A model made resident with its read and upload overlapped (harness/model_upload.hpp) is the
// model the plain path uploads, bit for bit: every row, the padding, the norms; through chunk
// borders, odd dimensions, a model that loses rows after the read, and the pageable switch.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

#include "harness/formats.hpp"
#include "harness/model_upload.hpp"
#include "harness/synthetic.hpp"
#include "runtime/device_model.hpp"
#include "tests/gpu_skip.hpp"

namespace fs = std::filesystem;
using namespace distancies;

namespace {

std::string temp_file(const std::string& name) {
  return (fs::temp_directory_path() / ("distancies_upload_" + std::to_string(::getpid()) + "_" + name)).string();
}

void expect_same_on_device(const DeviceModel& got, const Model& want) {
  ASSERT_EQ(got.rows, want.rows);
  ASSERT_EQ(got.ld, want.ld);
  const Model back = download_model(got);
  EXPECT_EQ(0, std::memcmp(back.vectors.data(), want.vectors.data(), static_cast<std::size_t>(want.rows) * want.ld * 4))
      << "vectors differ";
  EXPECT_EQ(0, std::memcmp(back.norms.data(), want.norms.data(), want.norms.size() * 4)) << "norms differ";
}

}  // namespace

TEST(ModelUpload, OverlappedUploadIsTheModelBitForBit) {
  DISTANCIES_REQUIRE_GPU();
  // Rows around the 16 MiB read chunk (13,797 rows of 304 floats), one row, odd dimensions.
  const std::vector<std::pair<std::int64_t, int>> shapes = {{13797, 301}, {13798, 301}, {60001, 300},
                                                            {20, 300},    {3001, 7},    {50000, 50}};
  for (const auto& [rows, dim] : shapes) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(dim));
    const Model m = make_synthetic_model(std::max<std::int64_t>(rows, 20), dim, 7);
    const std::string f = temp_file("m.dst");
    save_native(m, f);
    const ResidentModel r = load_resident(f, {});
    EXPECT_TRUE(r.timings.overlapped);
    EXPECT_GE(r.timings.readers, 1u);
    EXPECT_EQ(r.timings.vector_bytes, static_cast<std::uint64_t>(m.rows) * m.ld * 4);
    expect_same_on_device(*r.device, m);
    const ResidentModel pageable = load_resident(f, {}, /*pinned=*/false);
    EXPECT_FALSE(pageable.timings.overlapped) << "the study's pageable switch uploads after the read";
    expect_same_on_device(*pageable.device, m);
    std::remove(f.c_str());
  }
}

TEST(ModelUpload, RowsDroppedAfterTheReadAreUploadedAgain) {
  DISTANCIES_REQUIRE_GPU();
  Model m = make_synthetic_model(5000, 50, 3);
  m.vectors.data()[17 * m.ld + 3] = std::numeric_limits<float>::quiet_NaN();  // row 17 is skipped
  const std::string f = temp_file("nan.dst");
  save_native(m, f);
  LoadOptions opt;
  opt.skip_bad_rows = true;
  const ResidentModel r = load_resident(f, opt);
  EXPECT_EQ(r.host.rows, 4999);
  expect_same_on_device(*r.device, r.host);
  std::remove(f.c_str());
}

TEST(ModelUpload, OtherFormatsAreReadThenUploaded) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = make_synthetic_model(300, 20, 5);
  const std::string n = temp_file("a.dst");
  save_native(m, n);
  const Model host = load_model(n);
  const std::string t = temp_file("a.txt");
  {
    std::FILE* out = std::fopen(t.c_str(), "w");
    ASSERT_NE(out, nullptr);
    for (std::int64_t i = 0; i < host.rows; ++i) {
      std::fprintf(out, "%s", host.words[i].c_str());
      for (int j = 0; j < host.dim; ++j) std::fprintf(out, " %.9g", host.row(i)[j]);
      std::fprintf(out, "\n");
    }
    std::fclose(out);
  }
  const ResidentModel r = load_resident(t, {});
  EXPECT_FALSE(r.timings.overlapped);
  expect_same_on_device(*r.device, r.host);
  std::remove(n.c_str());
  std::remove(t.c_str());
}

TEST(ModelUpload, FloorsAreMeasured) {
  DISTANCIES_REQUIRE_GPU();
  const Model m = make_synthetic_model(2000, 300, 1);
  const std::string f = temp_file("floor.dst");
  save_native(m, f);
  const LoadFloors fl = measure_load_floors(f, std::size_t(16) << 20);
  EXPECT_GT(fl.read_ms, 0.0);
  EXPECT_GT(fl.read_gb_per_s, 0.0);
  EXPECT_GT(fl.copy_gb_per_s, 0.0);
  std::remove(f.c_str());
}

TEST(ModelUpload, MissingFileIsOneClearError) {
  DISTANCIES_REQUIRE_GPU();
  try {
    load_resident("/nonexistent/model.dst", {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.dst"), std::string::npos) << e.what();
  }
}
