// A model loaded for GPU search with its read and its upload overlapped: a native file's
// vectors go to the device chunk by chunk while the next chunks are still being read (the
// reading threads each copy their chunk into their own page-locked slot and send it on their
// own stream). Other formats are read first, then uploaded. docs/methodology.md, "Loading".
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "harness/formats.hpp"
#include "runtime/device.hpp"
#include "runtime/device_model.hpp"

namespace distancies {

class DeviceUpload : public VectorSink {
 public:
  DeviceUpload();
  ~DeviceUpload() override;
  void begin(std::int64_t rows, int dim, int ld, unsigned readers) override;
  void chunk(unsigned reader, std::uint64_t offset, const void* data, std::size_t bytes) override;
  void end() override;
  bool received() const { return begun_; }
  // The resident model once the host model is final: its norms go up here. A model that lost
  // rows after the read (skipped bad rows) is uploaded again whole.
  DeviceModel finish(const Model& m, bool pinned = true);

 private:
  struct Reader;
  std::vector<std::unique_ptr<Reader>> readers_;
  DeviceModel dm_;
  bool begun_ = false;
};

struct LoadTimings {
  double read_ms = 0;    // the vector section read (its upload overlapped) or the whole file read
  double rest_ms = 0;    // header, vocabulary, norms, validation
  double upload_ms = 0;  // what the upload added after the read (norms, waiting for the last copies)
  double total_ms = 0;   // file to resident model, wall clock
  std::uint64_t vector_bytes = 0;
  unsigned readers = 0;
  bool overlapped = false;  // the native path: upload during the read
};

struct ResidentModel {
  Model host;
  std::unique_ptr<DeviceModel> device;
  LoadTimings timings;
};

// Reads `path` and makes it resident on the GPU (pinned: page-locked staging; false is the
// study's pageable upload, never overlapped).
ResidentModel load_resident(const std::string& path, const LoadOptions& opt, bool pinned = true,
                            LoadReport* report = nullptr);

// The two floors a load is measured against (docs/methodology.md): one plain sequential read of
// the file (64 MiB reads into one reused buffer; page cache as it is) and a page-locked
// host-to-device copy of `copy_bytes`.
struct LoadFloors {
  double read_ms = 0;
  double read_gb_per_s = 0;
  double copy_gb_per_s = 0;
};
LoadFloors measure_load_floors(const std::string& path, std::size_t copy_bytes = std::size_t(256) << 20);

}  // namespace distancies
