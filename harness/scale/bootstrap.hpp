// A process group's bootstrap: which rank this process is, how many there are, and the NCCL
// unique id (128 opaque bytes) that rank 0 makes and every other rank must read before they
// can form a communicator. The id travels through a file (written atomically, polled by the
// others) or the environment; scripts/shard_launch.sh sets both up (docs/scale.md).
#pragma once
#include <cstddef>
#include <string>

namespace distancies {

struct ProcessGroup {
  int rank = 0;
  int size = 1;
  int local_rank = 0;   // the GPU of this host it uses (DISTANCIES_LOCAL_RANK; default the rank)
  std::string id_file;  // where rank 0 leaves the id (empty with one process)
};

// From DISTANCIES_RANK, DISTANCIES_WORLD_SIZE, DISTANCIES_LOCAL_RANK and DISTANCIES_NCCL_ID_FILE. `gpus` is what the
// command line asked for: a mismatch with the environment, or gpus > 1 without a launcher, is
// one clear Error.
ProcessGroup process_group_from_env(int gpus);

// Rank 0: writes the id (atomically: no reader sees half of it).
void publish_id(const std::string& path, const void* id, std::size_t bytes);
// Other ranks: waits until the file holds exactly `bytes` bytes, then reads them; Error after
// `timeout_s` seconds ("rank 0 never published ...").
void await_id(const std::string& path, void* id, std::size_t bytes, double timeout_s);

}  // namespace distancies
