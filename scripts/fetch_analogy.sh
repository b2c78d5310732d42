#!/usr/bin/env bash
# Fetches the Google analogy test set (Mikolov et al. 2013, 19,544 questions in 14 sections) from
# the gensim wheel on PyPI, where it ships as gensim/test/test_data/questions-words.txt.
# Idempotent: an existing output is kept. Prints one line saying what it did.
#   scripts/fetch_analogy.sh          -> .cache/analogy/questions-words.txt
# Environment: PYTHON (interpreter whose pip downloads the wheel, default python3).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out="$root/.cache/analogy/questions-words.txt"
version="4.3.3"
member="gensim/test/test_data/questions-words.txt"
file_sha256="8c29b3332afc46f3fb8be04cb5297bf96f39aa7131272dff57869b4485b22a36"

die() { echo "fetch_analogy.sh: error: $*" >&2; exit 1; }

if [[ -s "$out" ]]; then
  echo "fetch_analogy.sh: $out already there, nothing to do"
  exit 0
fi
command -v unzip >/dev/null || die "unzip not found (apt-get install unzip)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The platform options pin one wheel (cp311, manylinux2014 x86_64) whatever the local interpreter:
# only a data file is taken from it.
"${PYTHON:-python3}" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_17_x86_64 \
  "gensim==$version" -d "$tmp" >"$tmp/pip.log" 2>&1 \
  || die "pip could not download gensim==$version: $(tail -n 1 "$tmp/pip.log")"
wheel=$(ls "$tmp"/gensim-"$version"-cp311-*.whl 2>/dev/null | head -n 1)
[[ -n "$wheel" ]] || die "pip left no gensim-$version wheel in $tmp"

mkdir -p "$(dirname "$out")"
unzip -p "$wheel" "$member" >"$out.tmp" 2>/dev/null || { rm -f "$out.tmp"; die "$member not found in $(basename "$wheel")"; }
got=$(sha256sum "$out.tmp" | cut -d' ' -f1)
if [[ "$got" != "$file_sha256" ]]; then
  rm -f "$out.tmp"
  die "questions-words.txt from $(basename "$wheel") has SHA-256 $got, expected $file_sha256"
fi
mv "$out.tmp" "$out"
echo "fetch_analogy.sh: extracted $member from $(basename "$wheel") to $out ($(grep -vc '^:' "$out") questions)"
