// The GPU as the harness sees it: is there one, what is it, device memory and events.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "harness/cuda_check.hpp"

namespace distancies {

struct DeviceStatus {
  bool available = false;
  std::string reason;  // why not, when unavailable
  int device = 0;
  cudaDeviceProp props{};
  int driver_version = 0;
  int runtime_version = 0;
};

// Probes once and caches; never throws.
const DeviceStatus& device_status();

// Throws Error("no usable CUDA GPU: ...") when there is none.
void require_device();

std::string describe_device(const DeviceStatus& s);

// Owning device allocation. Out of memory names the size and what is free.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes, const char* what = "buffer");
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// cudaMalloc with the out-of-memory message; the caller frees with cudaFree.
void* device_malloc(std::size_t bytes, const char* what);

// Page-locked host memory (for fast, asynchronous transfers).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

class Event {
 public:
  Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { CUDA_CHECK(cudaEventRecord(e_, s)); }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_{};
};

// Milliseconds between two recorded events (synchronises on `end`).
float elapsed_ms(const Event& start, const Event& end);

}  // namespace distancies
