#include "harness/scale/nccl_comm.hpp"
#include "harness/scale/rendezvous.hpp"

#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "runtime/error.hpp"

#if DISTANCIES_HAVE_NCCL
#include <nccl.h>
#endif

namespace distancies {

#if DISTANCIES_HAVE_NCCL

namespace {

// A rank that cannot go on: one error line, then out at once. Unwinding is no option here: an
// NCCL kernel that waits for a dead peer never ends, and freeing device memory waits for it.
[[noreturn]] void die(const ProcessGroup& g, const std::string& what) {
  std::fprintf(stderr, "distancies: error: rank %d of %d: NCCL: %s\n", g.rank, g.size, what.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

// One thread per communicator that die()s when an armed call outlives its deadline: for the NCCL
// calls that may block forever (forming the communicator, enqueuing an all-gather). Arming costs
// a lock, not a thread.
class Watchdog {
 public:
  explicit Watchdog(const ProcessGroup& g) : g_(g), thread_([this] { watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  void arm(double seconds, const char* what) {
    std::lock_guard<std::mutex> lock(mu_);
    deadline_ = clock::now() + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
    seconds_ = seconds;
    what_ = what;
  }
  void disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    what_ = nullptr;
  }

 private:
  using clock = std::chrono::steady_clock;
  void watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(100));
      if (what_ && clock::now() > deadline_)
        die(g_, std::string(what_) + ": waited " + std::to_string(static_cast<int>(seconds_)) + " s");
    }
  }
  const ProcessGroup& g_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  const char* what_ = nullptr;
  clock::time_point deadline_{};
  double seconds_ = 0;
  std::thread thread_;  // last: started once the rest is ready
};

// Arms the watchdog for one scope.
struct Armed {
  Watchdog& dog;
  Armed(Watchdog& d, double seconds, const char* what) : dog(d) { dog.arm(seconds, what); }
  ~Armed() { dog.disarm(); }
};

}  // namespace

struct NcclComm::Api {
  void* lib = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) init_rank = nullptr;
  decltype(&ncclCommGetAsyncError) async_error = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclCommDestroy) destroy = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetVersion) get_version = nullptr;
  std::unique_ptr<Watchdog> dog;
  ~Api() {
    dog.reset();
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
  // Every connection made while the communicator forms (under the watchdog), not lazily inside
  // the first all-gather; the user's own setting wins.
  setenv("NCCL_RUNTIME_CONNECT", "0", 0);
  std::string why;
  api_->lib = open_nccl(&why);
  if (!api_->lib) throw Error(why);
  bind(api_->lib, api_->get_unique_id, "ncclGetUniqueId");
  bind(api_->lib, api_->init_rank, "ncclCommInitRank");
  bind(api_->lib, api_->async_error, "ncclCommGetAsyncError");
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
  // A blocking communicator (a non-blocking one hands every collective to a helper thread, which
  // costs more than the exchange itself), formed under a watchdog: a rank that never joins, or dies while
  // it forms, ends this one with an error line instead of a hang.
  ncclComm_t comm = nullptr;
  api_->dog = std::make_unique<Watchdog>(group_);
  {
    Armed armed(*api_->dog, g.timeout_s,
                "the communicator did not form: a rank never joined, or died (DISTANCIES_RENDEZVOUS_TIMEOUT)");
    check(api_->init_rank(&comm, g.size, id, g.rank), "ncclCommInitRank");
  }
  comm_ = comm;
}

NcclComm::~NcclComm() {
  if (comm_) api_->destroy(static_cast<ncclComm_t>(comm_));
}

void NcclComm::all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t s) {
  // Connections are made while the communicator forms (NCCL_RUNTIME_CONNECT=0), so this only
  // enqueues; the watchdog covers the rare case where it does not return.
  Armed armed(*api_->dog, group_.collective_timeout_s,
              "the all-gather could not start: another rank died or stalled (DISTANCIES_COLLECTIVE_TIMEOUT)");
  const ncclResult_t r = api_->all_gather(send, recv, bytes, ncclUint8, static_cast<ncclComm_t>(comm_), s);
  if (r != ncclSuccess) throw Error(std::string("NCCL all-gather: ") + api_->error_string(r));
}

void NcclComm::wait(cudaStream_t s) {
  // The stream alone while the exchange is young (it takes microseconds); the communicator's
  // state and the clock from the first millisecond on.
  const auto t0 = std::chrono::steady_clock::now();
  for (int polls = 0;; ++polls) {
    const cudaError_t q = cudaStreamQuery(s);
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) {
      (void)cudaGetLastError();
      throw Error(std::string("the exchange's stream failed: ") + cudaGetErrorString(q));
    }
    if (polls % 64 != 63) continue;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (waited < 1e-3) continue;
    ncclResult_t state = ncclSuccess;
    if (api_->async_error(static_cast<ncclComm_t>(comm_), &state) == ncclSuccess && state != ncclSuccess &&
        state != ncclInProgress)
      die(group_, std::string("the all-gather failed: ") + api_->error_string(state) + " (another rank died?)");
    if (waited > group_.collective_timeout_s)
      die(group_, "the all-gather did not complete in " +
                      std::to_string(static_cast<int>(group_.collective_timeout_s)) +
                      " s: another rank died or stalled (DISTANCIES_COLLECTIVE_TIMEOUT)");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
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
std::string NcclComm::version() const { return "none"; }

#endif

}  // namespace distancies
