// A process group's bootstrap: which rank this process is, how many there are, and where rank 0
// hands out the NCCL unique id (128 opaque bytes) that every rank needs before they can form a
// communicator. The identity comes from the launcher that started the job (docs/scale.md):
//   scripts/shard_launch.sh  DISTANCIES_RANK, DISTANCIES_WORLD_SIZE, DISTANCIES_LOCAL_RANK
//   mpirun (OpenMPI)         OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK
//   srun (Slurm)             SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID
//   torchrun                 RANK, WORLD_SIZE, LOCAL_RANK
// and the id goes over TCP (harness/scale/rendezvous.hpp): rank 0 listens at
// DISTANCIES_RENDEZVOUS=HOST:PORT (torchrun: MASTER_ADDR and MASTER_PORT + 1, the port after its
// own store's), and admits only connections that present the job's token: DISTANCIES_JOB_TOKEN,
// else the launcher's job id (SLURM_JOB_ID and SLURM_STEP_ID, TORCHELASTIC_RUN_ID,
// OMPI_MCA_ess_base_jobid or PMIX_NAMESPACE). DISTANCIES_RENDEZVOUS_TIMEOUT: seconds to join (120);
// DISTANCIES_COLLECTIVE_TIMEOUT: seconds one exchange may take before the rank gives up (20).
#pragma once
#include <string>

namespace distancies {

struct ProcessGroup {
  int rank = 0;
  int size = 1;
  int local_rank = 0;                // the GPU of this host it uses (default: the rank)
  std::string launcher;              // "shard_launch.sh", "mpirun", "srun", "torchrun"; empty with one process
  std::string rendezvous;            // HOST:PORT of rank 0's rendezvous (size > 1)
  std::string token;                 // the job's token (size > 1)
  double timeout_s = 120;            // joining: the rendezvous and the communicator
  double collective_timeout_s = 20;  // one exchange (DISTANCIES_COLLECTIVE_TIMEOUT)
};

// From the environment above. `gpus` is what the command line asked for: a mismatch with the
// launcher's world size, gpus > 1 without a launcher, or a job with no rendezvous address or no
// token is one clear Error.
ProcessGroup process_group_from_env(int gpus);

}  // namespace distancies
