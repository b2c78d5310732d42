#include "harness/scale/nccl_comm.hpp"
#include "harness/scale/rendezvous.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "runtime/error.hpp"

#if DISTANCIES_HAVE_NCCL
#include <nccl.h>
#endif

namespace distancies {

#if DISTANCIES_HAVE_NCCL

struct NcclComm::Api {
  void* lib = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) init_rank = nullptr;
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
  bind(api_->lib, api_->init_rank, "ncclCommInitRank");
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
  ncclComm_t comm = nullptr;
  check(api_->init_rank(&comm, g.size, id, g.rank), "ncclCommInitRank");
  comm_ = comm;
}

NcclComm::~NcclComm() {
  if (comm_) api_->destroy(static_cast<ncclComm_t>(comm_));
}

void NcclComm::all_gather(const void* send, void* recv, std::size_t bytes, cudaStream_t s) {
  const ncclResult_t r = api_->all_gather(send, recv, bytes, ncclUint8, static_cast<ncclComm_t>(comm_), s);
  if (r != ncclSuccess) throw Error(std::string("NCCL all-gather: ") + api_->error_string(r));
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
std::string NcclComm::version() const { return "none"; }

#endif

}  // namespace distancies
