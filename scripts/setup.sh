#!/usr/bin/env bash
# One command for a fresh machine: installs what is missing, builds everything (CUDA code
# too), fetches the real GloVe sample, then runs the main job:
#   with a GPU:    the main suite over the 2,196,016 x 300 model (the study's tables and each
#                  study's headline comparison, 3 repetitions), JSON + tables in results/local/;
#                  --full: every fixture (results/local/bench-full.json)
#   without one:   says so, then runs what can run (CPU search on the real model, CPU fixtures)
#   An interrupted run is resumed by running the same command again.
#   scripts/setup.sh [--build-only | --full]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-run}

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
pkgs=(cmake ninja-build g++ libbenchmark-dev libgtest-dev libgmock-dev nlohmann-json3-dev libcli11-dev python3-venv
      libroaring-dev  # CRoaring: the intersection study's roaring_allcores peer (docs/intersection.md)
      clang-format  # the C++/CUDA style check (ctest format.clang)
      clang libfuzzer-14-dev   # clang: the sanitizer and fuzz builds of the host code (docs/hardening.md)
      chromium chromium-driver)  # the dashboard's browser test (docs/dashboard.md)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

export PATH="/usr/local/cuda/bin:$PATH"
if ! command -v nvcc >/dev/null; then
  echo "setup: error: nvcc not found; install the CUDA Toolkit (expected /usr/local/cuda/bin/nvcc)" >&2
  exit 1
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
# Before configuring: CMake finds nvml.h (the nvidia-nvml-dev wheel) in .venv.
.venv/bin/pip install -q --disable-pip-version-check -r scripts/requirements.txt
bash scripts/fetch_glove.sh
bash scripts/fetch_analogy.sh

cmake --preset release >/dev/null
cmake --build --preset release
[ "$mode" = "--build-only" ] && exit 0

glove=.cache/models/glove.6B.50d.w2v.bin
bin=build/harness
mkdir -p results/local
if "$bin/cli/distancies" query --model "$glove" --device gpu -k 5 king - man + woman 2>/dev/null; then
  # The JSON is rewritten after every fixture; a run that did not finish is continued, not restarted.
  out=results/local/bench.json args=(--suite main)
  if [ "$mode" = "--full" ]; then
    out=results/local/bench-full.json args=(--suite full --benchmark_repetitions=5)
    [ -f results/local/bench.json ] && args+=(--estimate-from results/local/bench.json)
  fi
  if [ -f "$out" ] && ! grep -q '"suite_state": "complete"' "$out"; then
    echo "setup: $out is an unfinished run: resuming it (delete it to start again)"
    args+=(--resume "$out")
  fi
  "$bin/bench/distancies-bench" "${args[@]}" --out "$out"
  .venv/bin/python -m scripts.reports.report "$out" --out-dir results/local --md results/local/tables.md
  cat results/local/tables.md
  echo "setup: JSON in $out, tables in results/local/tables.md (scripts/setup.sh --full runs every fixture)"
else
  echo "setup: no usable CUDA GPU here; running the CPU parts (the GPU fixtures need a GPU host)"
  "$bin/cli/distancies" query --model "$glove" --device cpu -k 5 king - man + woman
  "$bin/bench/distancies-bench" --suite full --out results/local/bench-cpu.json
fi
