// Loading a model onto the GPU (docs/methodology.md, "Loading"): the overlapped native load
// (harness/model_upload.hpp) beside its two floors, a plain sequential read of the same file
// and a page-locked copy of its vectors. The file is the bench model written once in the
// native format (or the --model file when it is native), page cache warm or evicted.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "harness/bench/bench_state.hpp"
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/formats.hpp"
#include "harness/model_upload.hpp"

namespace distancies::bench {
namespace {

// The native file the fixtures load: written on first use, removed at exit when we wrote it.
struct LoadFile {
  std::string path;
  bool ours = false;
  ~LoadFile() {
    if (ours) std::remove(path.c_str());
  }
};

const LoadFile& load_file() {
  static LoadFile f = [] {
    const BenchState& s = bench_state();
    LoadFile out;
    if (!s.config.model_path.empty() && detect_format(s.config.model_path) == Format::Native) {
      out.path = s.config.model_path;
      return out;
    }
    const char* dir = std::getenv("TMPDIR");
    out.path =
        std::string(dir && *dir ? dir : "/tmp") + "/distancies-bench-load-" + std::to_string(::getpid()) + ".dst";
    out.ours = true;
    if (s.host_vectors) {
      save_native(s.host, out.path);
    } else {
      Model m = download_model(*s.device);
      m.words = s.host.words;
      save_native(m, out.path);
    }
    return out;
  }();
  return f;
}

// Evicts the file's pages from the page cache (no root needed): the next read comes from disk.
void evict(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  ::fdatasync(fd);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

// load/native_resident: file to resident model, wall clock, with the floors measured in the
// same fixture so the ratio is of one run. cold: the page cache is evicted before each sample.
void load_fixture(benchmark::State& st, bool cold) {
  const LoadFile& f = load_file();
  if (cold) evict(f.path);  // the read floor of a cold cache is a cold read
  const LoadFloors floors = measure_load_floors(f.path);
  Means m;
  ExecOptions o;
  o.warmups = 1;
  o.fixed_samples = true;
  if (cold) o.prepare = [&](cudaStream_t) { evict(f.path); };
  std::uint64_t bytes = 0;
  o.on_sample = [&](double ms) { m.add("load_ms", ms); };
  const bool ok = exec_timed(
      st,
      [&](cudaStream_t) {
        const ResidentModel r = load_resident(f.path, {});
        bytes = r.timings.vector_bytes;
        m.add("vectors_ms", r.timings.read_ms);
        m.add("rest_ms", r.timings.rest_ms);
        m.add("upload_tail_ms", r.timings.upload_ms);
        m.add("readers", r.timings.readers);
        return r.timings.total_ms;
      },
      o);
  if (!ok) return;
  m.publish(st);
  const double copy_floor_ms = floors.copy_gb_per_s > 0 ? bytes / floors.copy_gb_per_s / 1e6 : 0;
  st.counters["read_floor_ms"] = floors.read_ms;
  st.counters["read_floor_gb_per_s"] = floors.read_gb_per_s;
  st.counters["copy_floor_ms"] = copy_floor_ms;
  st.counters["copy_floor_gb_per_s"] = floors.copy_gb_per_s;
  st.counters["floor_ratio"] = m.mean("load_ms") / (floors.read_ms + copy_floor_ms);
  st.counters["vector_bytes"] = double(bytes);
  st.counters["cold_cache"] = cold ? 1 : 0;
}

// floor/load_read: one plain sequential read of the file (64 MiB reads into one buffer).
void read_floor_fixture(benchmark::State& st) {
  const LoadFile& f = load_file();
  Means m;
  ExecOptions o;
  o.warmups = 1;
  o.fixed_samples = true;
  o.on_sample = [&](double ms) { m.add("read_ms", ms); };
  const bool ok = exec_timed(
      st, [&](cudaStream_t) { return measure_load_floors(f.path, 1 << 20).read_ms; }, o);
  if (!ok) return;
  m.publish(st);
  st.counters["gb_per_s"] = double(std::filesystem::file_size(f.path)) / (m.mean("read_ms") * 1e6);
}

// floor/load_pinned_copy: the model's vector bytes from page-locked host memory to the GPU.
void copy_floor_fixture(benchmark::State& st) {
  const BenchState& s = bench_state();
  const std::size_t bytes = s.device->vector_bytes();
  static std::unique_ptr<PinnedBuffer> host;
  static std::unique_ptr<DeviceBuffer> dev;
  if (!host || host->bytes() < bytes) {
    host.reset();
    host = std::make_unique<PinnedBuffer>(bytes, "copy floor buffer");
    std::memset(host->as<void>(), 0, bytes);
    dev = std::make_unique<DeviceBuffer>(bytes, "copy floor buffer");
  }
  exec_kernel(
      st,
      [&](cudaStream_t str) {
        CUDA_CHECK(cudaMemcpyAsync(dev->get(), host->as<void>(), bytes, cudaMemcpyHostToDevice, str));
      },
      double(bytes));
  st.counters["bytes"] = double(bytes);
}

}  // namespace

void register_load_fixtures() {
  timed(add(FixtureName("floor", "load_read"), read_floor_fixture))->Iterations(3);
  timed(add(FixtureName("floor", "load_pinned_copy"), copy_floor_fixture));
  timed(add(FixtureName("load", "native_resident").axis("cache", "warm"), load_fixture, false))->Iterations(5);
  timed(add(FixtureName("load", "native_resident").axis("cache", "cold"), load_fixture, true))->Iterations(3);
}

}  // namespace distancies::bench
