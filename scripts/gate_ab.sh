#!/usr/bin/env bash
# The regression gate's runs (docs/regression.md): the gated set of scripts/gate.json run by the
# baseline's and the new build's bench alternately, `runs` times each (gate.json's rule), on one
# machine in one job, so that drift and each process's own offset fall on both sides alike.
#
#   scripts/gate_ab.sh BASE_BENCH NEW_BENCH OUT_DIR
#
# Environment: RUNS, REPS (default: gate.json's rule), MIN_TIME (default 0.02), PYTHON.
# OUT_DIR receives base-K.json and new-K.json; then
#   python3 -m scripts.ci.compare --gate --base OUT_DIR/base-*.json --new OUT_DIR/new-*.json --noise FILE
set -euo pipefail

base=${1:?usage: scripts/gate_ab.sh BASE_BENCH NEW_BENCH OUT_DIR}
new=${2:?usage: scripts/gate_ab.sh BASE_BENCH NEW_BENCH OUT_DIR}
out=${3:?usage: scripts/gate_ab.sh BASE_BENCH NEW_BENCH OUT_DIR}
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || py=python3
rule() { "$py" -c 'import json, sys; print(json.load(open("scripts/gate.json"))["rule"][sys.argv[1]])' "$1"; }
runs=${RUNS:-$(rule runs)}
reps=${REPS:-$(rule repetitions)}
min_time=${MIN_TIME:-0.02}
filter=$("$py" -m scripts.ci.gate filter)
for b in "$base" "$new"; do
  [ -x "$b" ] || { echo "gate_ab: error: $b is not an executable bench" >&2; exit 2; }
done
mkdir -p "$out"
for k in $(seq 1 "$runs"); do
  for side in base new; do
    bin=$base
    [ "$side" = new ] && bin=$new
    if ! "$bin" --no-host-copy --benchmark_filter="$filter" --benchmark_repetitions="$reps" \
        --benchmark_min_time="$min_time" --benchmark_out="$out/$side-$k.json" --benchmark_out_format=json \
        >"$out/$side-$k.log" 2>&1; then
      echo "gate_ab: error: the $side bench failed in run $k (tail of its log below)" >&2
      tail -n 5 "$out/$side-$k.log" >&2
      exit 2
    fi
    echo "gate_ab: $side-$k done"
  done
done
