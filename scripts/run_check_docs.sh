#!/usr/bin/env bash
# CTest's entry to the docs' truth checks (scripts/ci/check_docs.py: generated tables in step with
# the committed JSON, cited commits, repo paths in docs and comments); skips (exit 77, shown as
# Skipped) when the venv that scripts/setup.sh makes is missing.
cd "$(dirname "$0")/.." || exit 1
if [ ! -x .venv/bin/python ]; then
  echo "SKIPPED: no .venv with the script requirements (run scripts/setup.sh)"
  exit 77
fi
exec .venv/bin/python -m scripts.ci.check_docs "$@"
