#!/usr/bin/env bash
# Starts N processes of one command, one per GPU, for sharded search over NCCL (docs/scale.md):
#   scripts/shard_launch.sh 2 build/harness/cli/distancies query -m MODEL --gpus 2 king
#   scripts/shard_launch.sh 2 build/harness/bench/distancies-bench --benchmark_filter='^shard/'
# A thin launcher for one host (clusters use mpirun, srun or torchrun the same way; docs/scale.md):
# each process gets DISTANCIES_RANK (its GPU) and DISTANCIES_WORLD_SIZE, rank 0's TCP rendezvous
# for the NCCL id (DISTANCIES_RENDEZVOUS=127.0.0.1:a free port) with a fresh random
# DISTANCIES_JOB_TOKEN, and NCCL_NVLS_ENABLE=0 (NVLink multicast off: a shared fabric resource
# that a small all-gather does not need). Rank 0's output is the
# command's; the others' go to files, shown if that rank fails. If any rank fails, the others
# are stopped (a rank left waiting in a collective would hang) and its exit status is returned.
set -uo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 N COMMAND [ARGS...]   (N processes, one per GPU)" >&2
  exit 2
fi
n=$1
shift
dir=$(mktemp -d "${TMPDIR:-/tmp}/distancies-shard.XXXXXX")
trap 'rm -rf "$dir"' EXIT
# A free port of the loopback (asked of the kernel), else one in 20000 ... 59999.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null) ||
  port=$((20000 + RANDOM % 40000))
token=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
export NCCL_NVLS_ENABLE=0 DISTANCIES_WORLD_SIZE=$n DISTANCIES_RENDEZVOUS=127.0.0.1:$port DISTANCIES_JOB_TOKEN=$token
# libnccl.so.2 from the nvidia-nccl-cu13 wheel when the loader would not find one.
if [ -z "${DISTANCIES_NCCL_LIBRARY:-}" ]; then
  for py in "$(dirname "$0")/../.venv/bin/python" python3; do
    lib=$("$py" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null) || continue
    [ -f "$lib" ] && export DISTANCIES_NCCL_LIBRARY=$lib && break
  done
fi
declare -A rank_of
# Each rank in its own process group (job control), so stopping a rank stops what it started.
set -m
stop_all() { for pid in "${!rank_of[@]}"; do kill -- "-$pid" 2>/dev/null; done; }
trap 'stop_all; exit 130' INT TERM
for ((r = 0; r < n; r++)); do
  if [ "$r" = 0 ]; then
    DISTANCIES_RANK=0 "$@" &
  else
    DISTANCIES_RANK=$r "$@" >"$dir/rank$r.out" 2>"$dir/rank$r.err" &
  fi
  rank_of[$!]=$r
done
rc=0
left=$n
while [ "$left" -gt 0 ]; do
  wait -n -p done_pid
  status=$?
  left=$((left - 1))
  if [ "$status" -ne 0 ] && [ "$rc" -eq 0 ]; then
    rc=$status
    r=${rank_of[$done_pid]:-?}
    echo "shard_launch: rank $r exited with status $status; stopping the others" >&2
    [ "$r" != 0 ] && [ -f "$dir/rank$r.err" ] && sed "s/^/rank $r: /" "$dir/rank$r.err" | tail -20 >&2
    stop_all
  fi
done
exit "$rc"
