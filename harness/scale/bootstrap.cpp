#include "harness/scale/bootstrap.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "harness/runtime/atomic_file.hpp"
#include "harness/runtime/error.hpp"

namespace distancies {
namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end || x < 0 || x > 4096) throw Error(std::string(name) + "='" + v + "' is not a rank count or rank");
  return static_cast<int>(x);
}

}  // namespace

ProcessGroup process_group_from_env(int gpus) {
  if (gpus < 1) throw Error("--gpus must be at least 1");
  ProcessGroup g;
  g.size = env_int("DISTANCIES_WORLD_SIZE", 1);
  g.rank = env_int("DISTANCIES_RANK", 0);
  g.local_rank = env_int("DISTANCIES_LOCAL_RANK", g.rank);  // several hosts: the launcher of each sets it
  if (const char* f = std::getenv("DISTANCIES_NCCL_ID_FILE")) g.id_file = f;
  if (g.size != gpus) {
    if (g.size == 1)
      throw Error("--gpus " + std::to_string(gpus) + " needs " + std::to_string(gpus) +
                  " processes, one per GPU: start them with scripts/shard_launch.sh " + std::to_string(gpus) +
                  " distancies ...");
    throw Error("--gpus " + std::to_string(gpus) + " but the launcher started " + std::to_string(g.size) +
                " processes (DISTANCIES_WORLD_SIZE)");
  }
  if (g.rank >= g.size) throw Error("DISTANCIES_RANK " + std::to_string(g.rank) + " is not below the world size " +
                                    std::to_string(g.size));
  if (g.size > 1 && g.id_file.empty())
    throw Error("DISTANCIES_NCCL_ID_FILE is not set: the ranks have no way to share the NCCL id");
  return g;
}

void publish_id(const std::string& path, const void* id, std::size_t bytes) {
  AtomicFile f(path);
  f.write(id, bytes);
  f.commit();
}

void await_id(const std::string& path, void* id, std::size_t bytes, double timeout_s) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::vector<char> got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (got.size() == bytes) {
        std::copy(got.begin(), got.end(), static_cast<char*>(id));
        return;
      }
      throw Error(path + ": holds " + std::to_string(got.size()) + " bytes, not an NCCL id of " + std::to_string(bytes));
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > timeout_s)
      throw Error("rank 0 never published the NCCL id in " + path + " (waited " + std::to_string(int(timeout_s)) +
                  " s): did rank 0 start, and do the ranks share that folder?");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace distancies
