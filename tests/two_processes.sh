#!/usr/bin/env bash
# Two distancies processes on one GPU (issue: everyday use, item 6):
#  1. two queries at once on the same card both answer, each exactly as it answers alone;
#  2. with the card nearly full (another process holds the memory), a query that cannot get
#     memory says so in one line and exits non-zero.
# usage: two_processes.sh DISTANCIES HOLD_GPU_MEMORY WORKDIR     (exit 77: no GPU, skipped)
set -u
cli=$1 hold=$2 dir=$3
mkdir -p "$dir"
if ! "$cli" device >/dev/null 2>&1; then
  echo "SKIPPED: no usable CUDA GPU ($("$cli" device 2>&1 | tail -1))"
  exit 77
fi
model=$dir/two-proc.dsv
[ -f "$model" ] || "$cli" gen "$model" --rows 1000000 --dim 300 >/dev/null || { echo "FAIL: gen"; exit 1; }
answers() { grep -E '^ +[0-9]+  ' "$1"; }  # the ranked lines, without timings

# 1. Alone, then two at once (different variants too).
"$cli" query --model "$model" --device gpu -k 10 king - man + woman >"$dir/alone.txt" 2>/dev/null || { echo "FAIL: alone"; exit 1; }
"$cli" query --model "$model" --device gpu -k 10 king - man + woman >"$dir/a.txt" 2>"$dir/a.err" & a=$!
"$cli" query --model "$model" --device gpu -k 10 --variant fused_f16 king - man + woman >"$dir/b.txt" 2>"$dir/b.err" & b=$!
wait $a; ra=$?; wait $b; rb=$?
if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then echo "FAIL: concurrent exits $ra $rb"; cat "$dir"/a.err "$dir"/b.err; exit 1; fi
for f in a b; do
  if ! diff <(answers "$dir/alone.txt") <(answers "$dir/$f.txt") >/dev/null; then
    echo "FAIL: concurrent answer $f differs from the lone answer"; exit 1
  fi
done
echo "ok: two processes at once answered as one alone ($(answers "$dir/alone.txt" | wc -l) ranked lines each)"

# 2. Another process holds all but 700 MiB: the context fits, the 1.2 GB model does not.
"$hold" 700 >"$dir/hold.txt" 2>&1 & h=$!
trap 'kill $h 2>/dev/null' EXIT
for _ in $(seq 100); do grep -q holding "$dir/hold.txt" && break; sleep 0.1; done
grep -q holding "$dir/hold.txt" || { echo "FAIL: the holder did not start: $(cat "$dir/hold.txt")"; exit 1; }
"$cli" query --model "$model" --device gpu king >"$dir/full.txt" 2>"$dir/full.err"; rc=$?
kill $h; wait $h 2>/dev/null
lines=$(grep -c . "$dir/full.err")
errors=$(grep -c '^distancies: error: ' "$dir/full.err")
if [ $rc -eq 0 ] || [ "$errors" -ne 1 ] || ! grep -qi 'memory' "$dir/full.err"; then
  echo "FAIL: a full card must give one error line about memory and a non-zero exit (exit $rc):"; cat "$dir/full.err"; exit 1
fi
echo "ok: with the card held by another process: exit $rc, $lines stderr line(s): $(grep '^distancies: error' "$dir/full.err")"
echo "two processes ok"
