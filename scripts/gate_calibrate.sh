#!/usr/bin/env bash
# Calibrates the regression gate (docs/regression.md): runs the gated set of scripts/gate.json
# again and again with one binary in cycles of three runs (a, b: plain; i: --inject-slowdown)
# inside a time budget, then has scripts.ci.compare --calibration measure the rule's false-positive rate
# (a against b: every flag is a false alarm) and detection rate (a or b against i).
#
#   scripts/gate_calibrate.sh OUT_DIR [BENCH]
#
# Environment: BUDGET_S (seconds for the runs, default 480), INJECT (percent, default 3),
# MIN_TIME (--benchmark_min_time, default 0.02), REPS (default: gate.json's rule), PYTHON.
# OUT_DIR receives the runs (NN-aC.json, NN-bC.json, NN-iC.json, C the cycle; logs in
# runs.tar.gz) and this folder's calibration.{md,json} and noise.json. One folder judges itself
# with its own noise (in-sample); the committed calibration cross-fits two device calls'
# folders: python3 -m scripts.ci.compare --calibration DIR1 DIR2.
set -euo pipefail

out=${1:?usage: scripts/gate_calibrate.sh OUT_DIR [BENCH]}
bench=${2:-build/harness/bench/distancies-bench}
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || py=python3
budget=${BUDGET_S:-480}
inject=${INJECT:-3}
min_time=${MIN_TIME:-0.02}
reps=${REPS:-$("$py" -c 'import json; print(json.load(open("scripts/gate.json"))["rule"]["repetitions"])')}
filter=$("$py" -m scripts.ci.gate filter)
mkdir -p "$out"
logs=$(mktemp -d)

start=$SECONDS
longest=0
n=0
for cycle in $(seq 1 99); do
  for kind in a b i; do
    left=$((budget - (SECONDS - start)))
    # Start a cycle only if three runs as long as the longest so far still fit (plus 3 %).
    if [ "$kind" = a ] && [ "$n" -gt 0 ] && [ $((longest * 31 / 10)) -gt "$left" ]; then
      echo "gate_calibrate: ${left} s left, the longest run took ${longest} s: stopping after $((cycle - 1)) cycles"
      break 2
    fi
    n=$((n + 1))
    extra=()
    [ "$kind" = i ] && extra=(--inject-slowdown "$inject")
    name=$(printf '%02d-%s%d' "$n" "$kind" "$cycle")
    t0=$SECONDS
    # --no-host-copy: no host copy of the model (quicker start-up); V1, the one host-bound
    # pipeline the filter admits, is then skipped.
    if ! timeout "$((left > 1 ? left : 1))" "$bench" --no-host-copy "${extra[@]}" --benchmark_filter="$filter" \
        --benchmark_repetitions="$reps" --benchmark_min_time="$min_time" \
        --benchmark_out="$out/$name.json" --benchmark_out_format=json >"$logs/$name.log" 2>&1; then
      echo "gate_calibrate: run $name failed or ran out of time (tail of its log below)"
      tail -n 5 "$logs/$name.log"
      rm -f "$out/$name.json"
      break 2
    fi
    took=$((SECONDS - t0))
    [ "$took" -gt "$longest" ] && longest=$took
    echo "gate_calibrate: $name took ${took} s"
  done
done
# An unfinished cycle's runs stay out: a cycle is a, b and i.
last=$(ls "$out" | sed -n 's/^[0-9]*-[abi]\([0-9]*\)\.json$/\1/p' | sort -n | tail -1)
if [ -n "$last" ] && [ ! -f "$(ls "$out"/*-i"$last".json 2>/dev/null | head -1)" ]; then
  rm -f "$out"/*-[ab]"$last".json
fi

rc=0
"$py" -m scripts.ci.compare --calibration "$out" || rc=$?
tar czf "$out/runs.tar.gz" -C "$logs" .
rm -rf "$logs"
exit "$rc"
