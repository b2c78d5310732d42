// The GPU as the harness sees it: is there one, what is it, device memory and events.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "runtime/cuda_check.hpp"

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

// Owning device allocation. Out of memory (OutOfMemory) names the size and what is free.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes, const char* what = "buffer");
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)),
        bytes_(std::exchange(o.bytes_, 0)),
        owned_(std::exchange(o.owned_, true)) {}
  // A view of memory someone else owns (a slot of a streamed chunk): never freed by this object.
  static DeviceBuffer borrow(void* ptr, std::size_t bytes) {
    DeviceBuffer b;
    b.ptr_ = ptr;
    b.bytes_ = bytes;
    b.owned_ = false;
    return b;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  bool owned_ = true;
};

// Page-locked host memory (for fast, asynchronous transfers). Out of it is OutOfMemory too.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes, const char* what = "staging buffer");
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Owning CUDA stream. Empty until given flags (then created); converts to cudaStream_t, an
// empty one to the legacy default stream. Destroying it waits for its work first, so buffers
// released after it are no longer in use.
class Stream {
 public:
  Stream() = default;
  explicit Stream(unsigned flags) { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, flags)); }
  ~Stream() { reset(); }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      reset();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  operator cudaStream_t() const { return s_; }

 private:
  void reset() noexcept {
    if (!s_) return;
    cudaStreamSynchronize(s_);  // errors here belong to work already reported or abandoned
    cudaStreamDestroy(s_);
    s_ = nullptr;
  }
  cudaStream_t s_ = nullptr;
};

// Owning CUDA event; Timing::Off for events that only order work (cheaper to record and wait on).
class Event {
 public:
  enum class Timing { On, Off };
  explicit Event(Timing t = Timing::On) {
    CUDA_CHECK(cudaEventCreateWithFlags(&e_, t == Timing::On ? cudaEventDefault : cudaEventDisableTiming));
  }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      if (e_) cudaEventDestroy(e_);
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { CUDA_CHECK(cudaEventRecord(e_, s)); }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Milliseconds between two recorded events (synchronises on `end`).
float elapsed_ms(const Event& start, const Event& end);

// For tests: the n-th device or page-locked allocation from now (0: the next one) fails as if
// memory were full, once; n < 0 cancels. Lets a test reach every allocation failure an owner
// can meet and check that it cleans up.
void inject_allocation_failure(int n);

}  // namespace distancies
