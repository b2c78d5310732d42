#include "harness/scale/bootstrap.hpp"

#include <cstdlib>

#include "harness/scale/rendezvous.hpp"
#include "runtime/error.hpp"

namespace distancies {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int env_int(const char* name, int fallback, int lo = 0, long hi = 4096) {
  const char* v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (*end || x < lo || x > hi)
    throw Error(std::string(name) + "='" + v + "' is not " + (hi > 4096 ? "a port" : "a rank count or rank"));
  return static_cast<int>(x);
}

double seconds_from_env(const char* name, double fallback) {
  const char* t = env(name);
  if (!t) return fallback;
  char* end = nullptr;
  const double s = std::strtod(t, &end);
  if (*end || !(s > 0 && s <= 86400)) throw Error(std::string(name) + "='" + t + "' is not a number of seconds");
  return s;
}

struct Launcher {
  const char* name;
  const char* rank;
  const char* size;
  const char* local_rank;
};
// In order: an explicit DISTANCIES_* identity wins over the launcher's own.
constexpr Launcher kLaunchers[] = {
    {"shard_launch.sh", "DISTANCIES_RANK", "DISTANCIES_WORLD_SIZE", "DISTANCIES_LOCAL_RANK"},
    {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
};

std::string job_token() {
  if (const char* t = env("DISTANCIES_JOB_TOKEN")) return t;
  if (const char* j = env("SLURM_JOB_ID"))
    return std::string("slurm-") + j + "." + (env("SLURM_STEP_ID") ? env("SLURM_STEP_ID") : "0");
  if (const char* r = env("TORCHELASTIC_RUN_ID")) return std::string("torchrun-") + r;
  if (const char* o = env("OMPI_MCA_ess_base_jobid")) return std::string("ompi-") + o;
  if (const char* p = env("PMIX_NAMESPACE")) return std::string("pmix-") + p;
  return {};
}

std::string rendezvous_address(const std::string& launcher) {
  if (const char* a = env("DISTANCIES_RENDEZVOUS")) return a;
  const char* host = env("MASTER_ADDR");
  const char* port = env("MASTER_PORT");
  if (host && port) {
    // torchrun's own store listens at MASTER_PORT: ours takes the next port.
    const int p = env_int("MASTER_PORT", 0, 1, 65535) + (launcher == "torchrun" ? 1 : 0);
    if (p > 65535) throw Error("MASTER_PORT + 1 is not a port");
    return std::string(host) + ":" + std::to_string(p);
  }
  return {};
}

}  // namespace

ProcessGroup process_group_from_env(int gpus) {
  if (gpus < 1) throw Error("--gpus must be at least 1");
  ProcessGroup g;
  for (const Launcher& l : kLaunchers) {
    if (!env(l.size)) continue;
    g.launcher = l.name;
    g.size = env_int(l.size, 1, 1);
    g.rank = env_int(l.rank, 0);
    g.local_rank = env_int(l.local_rank, g.rank);  // several hosts: the launcher of each sets it
    break;
  }
  if (g.size != gpus) {
    if (g.size == 1)
      throw Error("--gpus " + std::to_string(gpus) + " needs " + std::to_string(gpus) +
                  " processes, one per GPU: start them with scripts/shard_launch.sh " + std::to_string(gpus) +
                  " distancies ..., mpirun -np " + std::to_string(gpus) + ", srun or torchrun");
    throw Error("--gpus " + std::to_string(gpus) + " but " + g.launcher + " started " + std::to_string(g.size) +
                " processes");
  }
  if (g.rank >= g.size)
    throw Error("rank " + std::to_string(g.rank) + " (" + g.launcher + ") is not below the world size " +
                std::to_string(g.size));
  if (g.size == 1) return g;
  g.rendezvous = rendezvous_address(g.launcher);
  if (g.rendezvous.empty())
    throw Error("no rendezvous for the NCCL id: set DISTANCIES_RENDEZVOUS=HOST:PORT (rank 0's host, a free port)");
  std::string host;
  int port = 0;
  split_address(g.rendezvous, &host, &port);
  g.token = job_token();
  if (g.token.empty())
    throw Error(
        "no job token for the rendezvous: set DISTANCIES_JOB_TOKEN (the same secret for every rank of the job)");
  if (g.token.size() > 128 || g.token.find_first_of(" \t\n") != std::string::npos)
    throw Error("the job token must be at most 128 characters with no spaces");
  g.timeout_s = seconds_from_env("DISTANCIES_RENDEZVOUS_TIMEOUT", g.timeout_s);
  g.collective_timeout_s = seconds_from_env("DISTANCIES_COLLECTIVE_TIMEOUT", g.collective_timeout_s);
  return g;
}

}  // namespace distancies
