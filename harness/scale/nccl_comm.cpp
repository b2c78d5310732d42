#include "harness/scale/nccl_comm.hpp"
#include "harness/scale/rendezvous.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "runtime/error.hpp"

#if DISTANCIES_HAVE_NCCL
#include <nccl.h>
#endif

namespace distancies {

#if DISTANCIES_HAVE_NCCL

struct NcclComm::Api {
  void* lib = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRankConfig) init_rank_config = nullptr;
  decltype(&ncclCommGetAsyncError) async_error = nullptr;
  decltype(&ncclCommAbort) abort = nullptr;
  decltype(&ncclCommFinalize) finalize = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetVersion) get_version = nullptr;
  ~Api() {
    if (lib) dlclose(lib);
  }
};

namespace {

// DISTANCIES_NCCL_LIBRARY (a path), else libnccl.so.2 on the loader's path.
void* open_nccl(std::string* why) {
  const char* path = std::getenv("DISTANCIES_NCCL_LIBRARY");
  void* lib = dlopen(path && *path ? path : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib && why)
    *why = std::string("cannot open ") + (path && *path ? path : "libnccl.so.2") + " (" + dlerror() +
           "): pip install nvidia-nccl-cu13 and put its nvidia/nccl/lib on LD_LIBRARY_PATH, or set "
           "DISTANCIES_NCCL_LIBRARY";
  return lib;
}

template <class F>
void bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) throw Error(std::string("libnccl.so.2 has no ") + name);
}

}  // namespace

bool nccl_available(std::string* why) {
  void* lib = open_nccl(why);
  if (lib) dlclose(lib);
  return lib != nullptr;
}

NcclComm::NcclComm(const ProcessGroup& g) : group_(g), api_(std::make_unique<Api>()) {
  // NVLink SHARP / multicast objects are a shared, limited resource of the host's NVSwitch
  // fabric; a small all-gather gains nothing from them (docs/scale.md).
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  std::string why;
  api_->lib = open_nccl(&why);
  if (!api_->lib) throw Error(why);
  bind(api_->lib, api_->get_unique_id, "ncclGetUniqueId");
  bind(api_->lib, api_->init_rank_config, "ncclCommInitRankConfig");
  bind(api_->lib, api_->async_error, "ncclCommGetAsyncError");
  bind(api_->lib, api_->abort, "ncclCommAbort");
  bind(api_->lib, api_->finalize, "ncclCommFinalize");
  bind(api_->lib, api_->all_gather, "ncclAllGather");
  bind(api_->lib, api_->destroy, "ncclCommDestroy");
  bind(api_->lib, api_->error_string, "ncclGetErrorString");
  bind(api_->lib, api_->get_version, "ncclGetVersion");
  auto check = [&](ncclResult_t r, const char* what) {
    if (r != ncclSuccess) throw Error(std::string("NCCL ") + what + ": " + api_->error_string(r));
  };
  ncclUniqueId id;
  if (g.rank == 0) {
    check(api_->get_unique_id(&id), "ncclGetUniqueId");
    if (g.size > 1) serve_rendezvous(g.rendezvous, g.token, g.size, &id, sizeof id, g.timeout_s);
  } else {
    fetch_rendezvous(g.rendezvous, g.token, g.rank, g.size, &id, sizeof id, g.timeout_s);
  }
  // Non-blocking: this rank polls the communicator instead of waiting inside NCCL, so a rank
  // that never joins, or dies, ends the wait with an error line instead of a hang.
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclComm_t comm = nullptr;
  const ncclResult_t r = api_->init_rank_config(&comm, g.size, id, g.rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) check(r, "ncclCommInitRankConfig");
  comm_ = comm;
  settle(g.timeout_s, "the communicator did not form (a rank never joined, or died; DISTANCIES_RENDEZVOUS_TIMEOUT)");
}

NcclComm::~NcclComm() {
  if (!comm_) return;
  // A non-blocking communicator is finalised (its pending work flushed), then destroyed; one
  // that cannot finalise in time is aborted instead.
  auto comm = static_cast<ncclComm_t>(comm_);
  ncclResult_t state = api_->finalize(comm);
  const auto t0 = std::chrono::steady_clock::now();
  while (state == ncclInProgress &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < group_.collective_timeout_s) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (api_->async_error(comm, &state) != ncclSuccess) break;
  }
  if (state == ncclSuccess)
    api_->destroy(comm);
  else
    api_->abort(comm);
}

[[noreturn]] void NcclComm::fail(const std::string& what) {
  // Abort releases this rank's NCCL kernels and resources; nothing of the communicator is used
  // again, so the destructor has nothing to destroy.
  if (comm_) api_->abort(static_cast<ncclComm_t>(comm_));
  comm_ = nullptr;
  throw Error("rank " + std::to_string(group_.rank) + " of " + std::to_string(group_.size) + ": NCCL: " + what);
}

namespace {
// Polls: spinning for the first millisecond (an exchange takes microseconds), then sleeping.
void pause_since(std::chrono::steady_clock::time_point t0) {
  if (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1))
    std::this_thread::yield();
  else
    std::this_thread::sleep_for(std::chrono::microseconds(200));
}
}  // namespace

void NcclComm::settle(double timeout_s, const char* what) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = api_->async_error(static_cast<ncclComm_t>(comm_), &state);
    if (r != ncclSuccess) fail(std::string("ncclCommGetAsyncError: ") + api_->error_string(r));
    if (state == ncclSuccess) return;
    if (state != ncclInProgress) fail(std::string(api_->error_string(state)) + " (" + what + ")");
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s)
      fail(std::string(what) + ": waited " + std::to_string(static_cast<int>(timeout_s)) + " s");
    pause_since(t0);
  }
}

void NcclComm::all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t s) {
  const ncclResult_t r = api_->all_gather(send, recv, bytes, ncclUint8, static_cast<ncclComm_t>(comm_), s);
  if (r == ncclInProgress)
    settle(group_.collective_timeout_s, "the all-gather could not be enqueued");
  else if (r != ncclSuccess)
    fail(std::string("all-gather: ") + api_->error_string(r));
}

void NcclComm::wait(cudaStream_t s) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) {
      (void)cudaGetLastError();
      fail(std::string("the exchange's stream failed: ") + cudaGetErrorString(q));
    }
    ncclResult_t state = ncclSuccess;
    if (api_->async_error(static_cast<ncclComm_t>(comm_), &state) == ncclSuccess && state != ncclSuccess &&
        state != ncclInProgress)
      fail(std::string("the all-gather failed: ") + api_->error_string(state) + " (another rank died?)");
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > group_.collective_timeout_s)
      fail("the all-gather did not complete in " + std::to_string(static_cast<int>(group_.collective_timeout_s)) +
           " s: another rank died or stalled (DISTANCIES_COLLECTIVE_TIMEOUT)");
    pause_since(t0);
  }
}

std::string NcclComm::version() const {
  int v = 0;
  api_->get_version(&v);
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

#else  // built without nccl.h

struct NcclComm::Api {};

bool nccl_available(std::string* why) {
  if (why) *why = "this build has no nccl.h (pip install nvidia-nccl-cu13 into .venv and configure again)";
  return false;
}

NcclComm::NcclComm(const ProcessGroup& g) : group_(g) {
  std::string why;
  nccl_available(&why);
  throw Error("sharded search needs NCCL: " + why);
}
NcclComm::~NcclComm() = default;
void NcclComm::all_gather(const void*, void*, std::size_t, cudaStream_t) {}
void NcclComm::wait(cudaStream_t) {}
void NcclComm::settle(double, const char*) {}
void NcclComm::fail(const std::string& what) { throw Error(what); }
std::string NcclComm::version() const { return "none"; }

#endif

}  // namespace distancies
