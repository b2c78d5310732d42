#include "harness/intersect/resident_server.hpp"

#include <chrono>
#include <cstring>
#include <string>

#include "runtime/cuda_check.hpp"
#include "runtime/error.hpp"

namespace distancies::intersect {
namespace {

constexpr auto kPatience = std::chrono::seconds(5);

// The largest answer region one query needs: its candidate positions, then its tiles' counts.
std::size_t answer_bytes(const GpuBatch& b) {
  std::uint64_t most = 1;
  for (std::size_t q = 0; q < b.queries(); ++q) {
    const GpuBatch::OneQuery one = b.one_query(q);
    most = std::max<std::uint64_t>(most, one.length + static_cast<std::uint64_t>(one.ntiles));
  }
  return most * 4;
}

template <class T>
T* device_address(const PinnedBuffer& p) {
  T* d = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d), p.as<void>(), 0));
  return d;
}

}  // namespace

ResidentServer::ResidentServer(const GpuBatch& batch, const IntersectVariant& v)
    : batch_(batch), generation_(batch.generation()) {
  if (!v.serve) throw Error(std::string("'") + v.name + "' has no resident kernel (probe and packed rows do)");
  IntersectArgs a = batch.one_query_args(v);
  int mappable = 0, dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&mappable, cudaDevAttrCanMapHostMemory, dev));
  if (!mappable) throw Error("this GPU cannot map host memory, which the resident intersection kernel answers in");
  bell_ = PinnedBuffer(sizeof(ServeBell), "the resident kernel's doorbell");
  bell_host_ = bell_.as<ServeBell>();
  std::memset(static_cast<void*>(bell_host_), 0, sizeof(ServeBell));
  answers_ = PinnedBuffer(answer_bytes(batch), "one query's answers");
  answers_device_ = device_address<unsigned>(answers_);
  a.cand = answers_device_;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  try {
    blocks_ = v.serve(a, device_address<ServeBell>(bell_), stream_);
  } catch (...) {
    cudaStreamDestroy(stream_);
    throw;
  }
  running_ = true;
}

ResidentServer::~ResidentServer() {
  try {
    stop();
  } catch (const Error&) {
    // Reported by the caller's stop() where it matters; a destructor only lets go.
  }
  if (stream_) cudaStreamDestroy(stream_);  // returns at once, even with the kernel still there
}

void ResidentServer::ring(int first_tile, int ntiles, unsigned counts_at, int stop) {
  bell_host_->first_tile = first_tile;
  bell_host_->ntiles = ntiles;
  bell_host_->counts_at = counts_at;
  bell_host_->stop = stop;
  __atomic_store_n(&bell_host_->seq, ++seq_, __ATOMIC_RELEASE);  // the fields above before seq
}

// Until every block has stored this request's seq to its done slot; the stream is looked at now
// and then, so that a kernel that failed or returned is an error, not a wait.
void ResidentServer::wait_for_blocks(const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  unsigned long spins = 0;
  for (int b = 0; b < blocks_;) {
    if (__atomic_load_n(&bell_host_->done[b], __ATOMIC_ACQUIRE) == seq_) {
      ++b;
      continue;
    }
    if (++spins % 4096 != 0) continue;
    const cudaError_t e = cudaStreamQuery(stream_);
    if (e != cudaErrorNotReady) {
      running_ = false;
      if (e != cudaSuccess)
        throw Error(std::string("the resident intersection kernel failed: ") + cudaGetErrorString(e));
      throw Error(std::string("the resident intersection kernel returned before answering ") + what);
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw Error(std::string("the resident intersection kernel did not answer ") + what + " within 5 s");
  }
}

std::vector<std::uint32_t> ResidentServer::answer(std::size_t q) {
  if (!running_) throw Error("the resident intersection kernel is not running");
  if (batch_.generation() != generation_)
    throw Error("the batch changed under the resident intersection kernel (start another on it)");
  const GpuBatch::OneQuery one = batch_.one_query(q);
  if (one.ntiles == 0) return {};
  ring(one.first_tile, one.ntiles, static_cast<unsigned>(one.length), 0);
  wait_for_blocks(("query " + std::to_string(q + 1)).c_str());
  return gather_tile_answers(answers_.as<unsigned>(), one.length, one.ntiles);
}

void ResidentServer::stop() {
  if (!running_) return;
  running_ = false;
  ring(0, 0, 0, 1);
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  cudaError_t e;
  while ((e = cudaStreamQuery(stream_)) == cudaErrorNotReady)
    if (std::chrono::steady_clock::now() > deadline)
      throw Error("the resident intersection kernel did not stop within 5 s");
  if (e != cudaSuccess) throw Error(std::string("the resident intersection kernel failed: ") + cudaGetErrorString(e));
}

}  // namespace distancies::intersect
