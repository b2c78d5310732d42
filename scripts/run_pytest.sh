#!/usr/bin/env bash
# CTest's entry to the Python tests: skips (exit 77, shown as Skipped) when the venv that
# scripts/setup.sh makes is missing.
cd "$(dirname "$0")/.." || exit 1
if [ ! -x .venv/bin/python ]; then
  echo "SKIPPED: no .venv with the script requirements (run scripts/setup.sh)"
  exit 77
fi
exec .venv/bin/python -m pytest -q scripts/tests "$@"
