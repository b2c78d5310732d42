#include "harness/device.hpp"

#include <cstdio>

namespace distancies {

void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  std::string msg;
  if (e == cudaErrorMemoryAllocation) {
    msg = "GPU out of memory";
  } else if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    msg = "no usable CUDA GPU";
  } else {
    msg = "CUDA error";
  }
  msg += std::string(": ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") in " + what + " at " + file +
         ":" + std::to_string(line);
  throw Error(msg);
}

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

void* device_malloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes == 0 ? 1 : bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    char buf[256];
    std::snprintf(buf, sizeof buf, "GPU out of memory: %s needs %.2f GiB, %.2f GiB of %.2f GiB free", what,
                  bytes / double(1 << 30), free_b / double(1 << 30), total_b / double(1 << 30));
    throw OutOfMemory(buf);
  }
  CUDA_CHECK(e);
  return p;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) : ptr_(device_malloc(bytes, what)), bytes_(bytes) {}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) { CUDA_CHECK(cudaMallocHost(&ptr_, bytes == 0 ? 1 : bytes)); }

PinnedBuffer::~PinnedBuffer() {
  if (ptr_) cudaFreeHost(ptr_);
}

float elapsed_ms(const Event& start, const Event& end) {
  CUDA_CHECK(cudaEventSynchronize(end.get()));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), end.get()));
  return ms;
}

}  // namespace distancies
