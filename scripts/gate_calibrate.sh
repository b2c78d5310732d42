#!/usr/bin/env bash
# Calibrates the regression gate (docs/regression.md): runs the gated set of scripts/gate.json
# again and again with one binary, alternating plain runs and runs with --inject-slowdown, inside a
# time budget, then has compare.py --calibration measure the rule's false-positive rate (plain
# against plain: every flag is a false alarm) and detection rate (plain against injected).
#
#   scripts/gate_calibrate.sh OUT_DIR [BENCH]
#
# Environment: BUDGET_S (seconds for the runs, default 480), INJECT (percent, default 3),
# MIN_TIME (--benchmark_min_time, default 0.05), REPS (default: gate.json's rule), PYTHON.
# OUT_DIR receives calibration.md, calibration.json and gate-calibration.tar.gz (every run's JSON
# and log); the committed summary is rerun with python3 -m scripts.ci.compare --calibration on the JSON.
set -euo pipefail

out=${1:?usage: scripts/gate_calibrate.sh OUT_DIR [BENCH]}
bench=${2:-build/harness/bench/distancies-bench}
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || py=python3
budget=${BUDGET_S:-480}
inject=${INJECT:-3}
min_time=${MIN_TIME:-0.05}
reps=${REPS:-$("$py" -c 'import json; print(json.load(open("scripts/gate.json"))["rule"]["repetitions"])')}
filter=$("$py" -m scripts.ci.gate filter)
work=$(mktemp -d)
mkdir -p "$out"

# A plain run, its twin and an injected run, then again: drift during the call touches all three.
order=(a1 b1 i1 a2 b2 i2 a3 b3 i3)
start=$SECONDS
longest=0
n=0
for tag in "${order[@]}"; do
  left=$((budget - (SECONDS - start)))
  # Start a run only if one as long as the longest so far still fits (plus a margin).
  if [ "$n" -gt 0 ] && [ $((longest * 6 / 5)) -gt "$left" ]; then
    echo "gate_calibrate: ${left} s left, the longest run took ${longest} s: stopping after $n runs"
    break
  fi
  n=$((n + 1))
  extra=()
  [ "${tag:0:1}" = i ] && extra=(--inject-slowdown "$inject")
  name=$(printf '%02d-%s' "$n" "$tag")
  t0=$SECONDS
  # --no-host-copy: no host copy of the model (quicker start-up); V1, the one host-bound
  # pipeline the filter admits, is then skipped.
  if ! timeout "$left" "$bench" --no-host-copy "${extra[@]}" --benchmark_filter="$filter" \
      --benchmark_repetitions="$reps" --benchmark_min_time="$min_time" \
      --benchmark_out="$work/$name.json" --benchmark_out_format=json >"$work/$name.log" 2>&1; then
    echo "gate_calibrate: run $name failed or ran out of time (tail of its log below)"
    tail -n 5 "$work/$name.log"
    rm -f "$work/$name.json"
    break
  fi
  took=$((SECONDS - t0))
  [ "$took" -gt "$longest" ] && longest=$took
  echo "gate_calibrate: $name took ${took} s"
done

rc=0
"$py" -m scripts.ci.compare --calibration "$work" --out-dir "$work" || rc=$?
cp "$work"/calibration.md "$work"/calibration.json "$work"/noise.json "$out"/ 2>/dev/null || true
tar czf "$out/gate-calibration.tar.gz" -C "$work" .
rm -rf "$work"
exit "$rc"
