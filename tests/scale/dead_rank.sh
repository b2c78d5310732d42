#!/usr/bin/env bash
# A rank that dies mid-batch (docs/scale.md, "Faults"): the other rank, started as a cluster
# launcher would start it (no shard_launch.sh to stop it), must exit non-zero with one
# `distancies: error:` line naming the exchange within 30 s, never hang.
#   tests/scale/dead_rank.sh DISTANCIES_CLI [WORK_DIR] [replicate]
# `replicate`: both ranks hold every row and the batch (600 queries) splits by queries.
# Exit 0: as above; 1: it hung, crashed or said something else; 77: fewer than two GPUs or no NCCL.
set -uo pipefail
cli=${1:?usage: dead_rank.sh DISTANCIES_CLI [WORK_DIR] [replicate]}
work=${2:-$(mktemp -d)}
extra=()
[ "${3:-}" = replicate ] && extra=(--replicate)
mkdir -p "$work"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${gpus:-0}" -lt 2 ]; then
  echo "SKIPPED: needs two GPUs (found ${gpus:-0})"
  exit 77
fi
"$cli" gen "$work/m.dsv" --rows 200000 --dim 300 >/dev/null || { echo "FAIL: could not generate the model"; exit 1; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export DISTANCIES_WORLD_SIZE=2 DISTANCIES_RENDEZVOUS=127.0.0.1:$port DISTANCIES_JOB_TOKEN=dead-rank-test
export DISTANCIES_TEST_DIE_RANK=1 DISTANCIES_COLLECTIVE_TIMEOUT=10 NCCL_NVLS_ENABLE=0
if [ ${#extra[@]} -gt 0 ]; then
  for i in $(seq 200); do printf 'king\nqueen\nman\n'; done >"$work/queries.txt"
else
  printf 'king\nqueen\nman\n' >"$work/queries.txt"
fi
start=$SECONDS
DISTANCIES_RANK=0 timeout 120 "$cli" query -m "$work/m.dsv" --gpus 2 "${extra[@]}" --batch "$work/queries.txt" \
  >"$work/rank0.out" 2>"$work/rank0.err" &
p0=$!
DISTANCIES_RANK=1 DISTANCIES_LOCAL_RANK=1 timeout 120 "$cli" query -m "$work/m.dsv" --gpus 2 "${extra[@]}" \
  --batch "$work/queries.txt" >"$work/rank1.out" 2>"$work/rank1.err" &
p1=$!
wait "$p1"
rc1=$?
wait "$p0"
rc0=$?
took=$((SECONDS - start))
echo "rank 1: exit $rc1: $(tr '\n' ' ' <"$work/rank1.err")"
echo "rank 0: exit $rc0 after ${took} s: $(tr '\n' ' ' <"$work/rank0.err")"
if grep -q "needs NCCL\|cannot open .*libnccl" "$work/rank0.err"; then
  echo "SKIPPED: no NCCL here"
  exit 77
fi
errors=$(grep -c '^distancies: error:' "$work/rank0.err" || true)
if [ "$rc1" = 3 ] && [ "$rc0" != 0 ] && [ "$rc0" != 124 ] && [ "$errors" = 1 ] && [ "$took" -le 30 ] &&
    grep -q '^distancies: error: .*all-gather' "$work/rank0.err"; then
  echo "PASS: rank 0 left with one error line in ${took} s"
  exit 0
fi
echo "FAIL: expected rank 1 to exit 3 and rank 0 to exit non-zero (not 124: a hang) with one error line about the all-gather within 30 s"
exit 1
