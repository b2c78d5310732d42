#include "runtime/device.hpp"

#include <atomic>
#include <cstdio>

namespace distancies {

namespace {

// inject_allocation_failure's countdown: < 0 off, 0 the next allocation fails.
std::atomic<int> fail_countdown{-1};

bool injected_failure() {
  int n = fail_countdown.load();
  while (n >= 0 && !fail_countdown.compare_exchange_weak(n, n - 1)) {
  }
  return n == 0;
}

std::string size_text(std::size_t bytes) {
  char buf[64];
  if (bytes >= (std::size_t(1) << 30))
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(1 << 30));
  else if (bytes >= (std::size_t(1) << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%zu bytes", bytes);
  return buf;
}

// ", 1.20 GiB of 79.10 GiB free", or nothing where the GPU cannot say.
std::string free_text() {
  std::size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return ", " + size_text(free_b) + " of " + size_text(total_b) + " free";
}

}  // namespace

void throw_out_of_memory(MemoryKind kind, const std::string& what, std::size_t bytes) {
  cudaGetLastError();  // the failed allocation's error is not sticky: clear it for the next check
  std::string msg = kind == MemoryKind::PinnedHost ? "out of page-locked host memory: " : "GPU out of memory: ";
  msg += what;
  if (bytes > 0) msg += " needs " + size_text(bytes);
  if (kind == MemoryKind::Device) msg += free_text();
  throw OutOfMemory(msg);
}

void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  const std::string where = std::string(what) + " at " + file + ":" + std::to_string(line);
  if (e == cudaErrorMemoryAllocation) throw_out_of_memory(MemoryKind::Device, where, 0);
  std::string msg;
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    msg = "no usable CUDA GPU";
  } else {
    msg = "CUDA error";
  }
  msg += std::string(": ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") in " + where;
  throw Error(msg);
}

void inject_allocation_failure(int n) { fail_countdown.store(n < 0 ? -1 : n); }

const DeviceStatus& device_status() {
  static const DeviceStatus status = [] {
    DeviceStatus s;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaErrorInsufficientDriver) {
      s.reason = "no NVIDIA driver, or one older than CUDA runtime " + std::to_string(CUDART_VERSION / 1000) + "." +
                 std::to_string(CUDART_VERSION % 1000 / 10) + " (cudaErrorInsufficientDriver)";
      cudaGetLastError();
      return s;
    }
    if (e != cudaSuccess) {
      s.reason = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
      cudaGetLastError();
      return s;
    }
    if (count == 0) {
      s.reason = "no CUDA device found";
      return s;
    }
    if ((e = cudaGetDeviceProperties(&s.props, 0)) != cudaSuccess) {
      s.reason = std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(e);
      return s;
    }
    cudaDriverGetVersion(&s.driver_version);
    cudaRuntimeGetVersion(&s.runtime_version);
    s.available = true;
    return s;
  }();
  return status;
}

void require_device() {
  const DeviceStatus& s = device_status();
  if (!s.available) throw Error("no usable CUDA GPU (" + s.reason + "); use --device cpu");
}

std::string describe_device(const DeviceStatus& s) {
  if (!s.available) return "no GPU (" + s.reason + ")";
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s, sm_%d%d, %d SMs, %.1f GiB", s.props.name, s.props.major, s.props.minor,
                s.props.multiProcessorCount, s.props.totalGlobalMem / double(1 << 30));
  return buf;
}

namespace {

void* device_malloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t e = injected_failure() ? cudaErrorMemoryAllocation : cudaMalloc(&p, bytes == 0 ? 1 : bytes);
  if (e == cudaErrorMemoryAllocation) throw_out_of_memory(MemoryKind::Device, what, bytes);
  CUDA_CHECK(e);
  return p;
}

void* pinned_malloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t e = injected_failure() ? cudaErrorMemoryAllocation : cudaMallocHost(&p, bytes == 0 ? 1 : bytes);
  if (e == cudaErrorMemoryAllocation) throw_out_of_memory(MemoryKind::PinnedHost, what, bytes);
  CUDA_CHECK(e);
  return p;
}

}  // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) : ptr_(device_malloc(bytes, what)), bytes_(bytes) {}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ && owned_) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ && owned_) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    owned_ = std::exchange(o.owned_, true);
  }
  return *this;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes, const char* what) : ptr_(pinned_malloc(bytes, what)), bytes_(bytes) {}

PinnedBuffer::~PinnedBuffer() {
  if (ptr_) cudaFreeHost(ptr_);
}

PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

float elapsed_ms(const Event& start, const Event& end) {
  CUDA_CHECK(cudaEventSynchronize(end.get()));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return ms;
}

}  // namespace distancies
