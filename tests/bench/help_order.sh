#!/bin/sh
# distancies-bench --help: the harness's own options (model, query, k, mode, stopping) come
# before Google Benchmark's. Prints "help order ok" on success (CTest matches it).
bench=$1
out=$("$bench" --help 2>&1) || { echo "--help exited $?"; exit 1; }
line_of() { printf '%s\n' "$out" | grep -n -e "$1" | head -n 1 | cut -d: -f1; }
gb=$(line_of '--benchmark_list_tests')
[ -n "$gb" ] || { echo "Google Benchmark's options are missing"; exit 1; }
for opt in '--model' '--query' '^ *-k' '--rows' '--mode' '--target-rsd' '--min-time' '--max-time'; do
  at=$(line_of "$opt")
  [ -n "$at" ] || { echo "option $opt is missing from --help"; exit 1; }
  [ "$at" -lt "$gb" ] || { echo "option $opt (line $at) is not above Google Benchmark's (line $gb)"; exit 1; }
done
echo "help order ok"
