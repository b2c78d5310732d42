#include "harness/model_upload.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace distancies {
namespace {
using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}
}  // namespace

// One reading thread's two page-locked slots: fill one while the other is in flight.
struct DeviceUpload::Reader {
  PinnedBuffer slot[2];
  Event done[2] = {Event(Event::Timing::Off), Event(Event::Timing::Off)};
  bool busy[2] = {false, false};
  Stream stream{cudaStreamNonBlocking};
  int next = 0;
};

DeviceUpload::DeviceUpload() { require_device(); }

// Streams wait for their copies before the slots they read are freed (members go in reverse).
DeviceUpload::~DeviceUpload() = default;

void DeviceUpload::begin(std::int64_t rows, int dim, int ld, unsigned readers) {
  dm_ = DeviceModel{};
  dm_.rows = rows;
  dm_.dim = dim;
  dm_.ld = ld;
  dm_.vectors = DeviceBuffer(dm_.vector_bytes(), "the model's vectors");
  readers_.clear();
  for (unsigned r = 0; r < readers; ++r) readers_.push_back(std::make_unique<Reader>());
  begun_ = true;
}

void DeviceUpload::chunk(unsigned reader, std::uint64_t offset, const void* data, std::size_t bytes) {
  Reader& r = *readers_.at(reader);
  const int s = r.next;
  r.next ^= 1;
  if (r.busy[s]) CUDA_CHECK(cudaEventSynchronize(r.done[s].get()));
  if (r.slot[s].bytes() < bytes) {
    r.slot[s] = PinnedBuffer();
    r.slot[s] = PinnedBuffer(bytes, "model upload staging");
  }
  std::memcpy(r.slot[s].as<char>(), data, bytes);
  CUDA_CHECK(
      cudaMemcpyAsync(dm_.vectors.as<char>() + offset, r.slot[s].as<void>(), bytes, cudaMemcpyHostToDevice, r.stream));
  r.done[s].record(r.stream);
  r.busy[s] = true;
}

void DeviceUpload::end() {
  for (auto& r : readers_) CUDA_CHECK(cudaStreamSynchronize(r->stream));
}

DeviceModel DeviceUpload::finish(const Model& m, bool pinned) {
  if (!begun_) return upload_model(m, pinned);
  end();
  if (m.rows != dm_.rows || m.ld != dm_.ld) {  // rows skipped after the read: the copy sent is not the model
    readers_.clear();
    dm_ = DeviceModel{};  // freed before the whole model goes up again (one copy at a time)
    begun_ = false;
    return upload_model(m, pinned);
  }
  readers_.clear();  // the staging goes back now, not with the searcher
  dm_.norms = DeviceBuffer(static_cast<std::size_t>(m.rows) * sizeof(float), "the model's norms");
  CUDA_CHECK(cudaMemcpy(dm_.norms.get(), m.norms.data(), m.rows * sizeof(float), cudaMemcpyHostToDevice));
  dm_.measure_norm_range();
  begun_ = false;
  return std::move(dm_);
}

ResidentModel load_resident(const std::string& path, const LoadOptions& opt, bool pinned, LoadReport* report) {
  require_device();
  const auto t0 = clock_type::now();
  ResidentModel out;
  LoadReport local;
  LoadReport& rep = report ? *report : local;
  LoadOptions o = opt;
  DeviceUpload up;
  const bool native = (opt.format == Format::Auto ? detect_format(path) : opt.format) == Format::Native;
  if (native && pinned) o.sink = &up;
  out.host = load_model(path, o, &rep);
  const double read_done = ms_since(t0);
  LoadTimings& t = out.timings;
  t.overlapped = up.received();
  out.device =
      std::make_unique<DeviceModel>(t.overlapped ? up.finish(out.host, pinned) : upload_model(out.host, pinned));
  t.total_ms = ms_since(t0);
  t.read_ms = t.overlapped ? rep.vectors_ms : read_done;
  t.rest_ms = t.overlapped ? rep.rest_ms : 0;
  t.upload_ms = t.total_ms - read_done;
  t.vector_bytes = out.device->vector_bytes();
  t.readers = t.overlapped ? rep.readers : 1;
  return out;
}

LoadFloors measure_load_floors(const std::string& path, std::size_t copy_bytes) {
  require_device();
  LoadFloors f;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  std::vector<char> buf(std::size_t(64) << 20);
  std::uint64_t total = 0;
  const auto t0 = clock_type::now();
  for (ssize_t got; (got = ::read(fd, buf.data(), buf.size())) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      ::close(fd);
      throw Error(path + ": read error: " + std::strerror(errno));
    }
    total += static_cast<std::uint64_t>(got);
  }
  f.read_ms = ms_since(t0);
  ::close(fd);
  f.read_gb_per_s = f.read_ms > 0 ? total / f.read_ms / 1e6 : 0;

  PinnedBuffer host(copy_bytes, "copy floor buffer");
  std::memset(host.as<void>(), 1, copy_bytes);
  DeviceBuffer dev(copy_bytes, "copy floor buffer");
  const Stream stream(cudaStreamNonBlocking);
  Event a, b;
  CUDA_CHECK(cudaMemcpyAsync(dev.get(), host.as<void>(), copy_bytes, cudaMemcpyHostToDevice, stream));  // warm-up
  float best = 0;
  for (int i = 0; i < 3; ++i) {
    a.record(stream);
    CUDA_CHECK(cudaMemcpyAsync(dev.get(), host.as<void>(), copy_bytes, cudaMemcpyHostToDevice, stream));
    b.record(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const float ms = elapsed_ms(a, b);
    best = i == 0 ? ms : std::min(best, ms);
  }
  f.copy_gb_per_s = best > 0 ? copy_bytes / best / 1e6 : 0;
  return f;
}

}  // namespace distancies
