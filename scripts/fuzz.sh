#!/usr/bin/env bash
# Runs every libFuzzer target (tests/fuzz/fuzz_*.cpp, built by clang with ASan + UBSan) for a
# bounded time from its committed corpus (tests/fuzz/corpus/<target>/, copied: the committed one
# is not grown). Fails on any crash, leak, timeout or out-of-memory; prints each target's
# executions. A finding is saved as build-fuzz/findings/<target>/crash-* (commit it to the corpus
# once fixed: the replay tests of scripts/host_checks.sh run it from then on).
#   scripts/fuzz.sh [SECONDS_PER_TARGET=60] [PARALLEL=nproc]
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
jobs=${2:-$(nproc)}
dir=build-fuzz
command -v clang++ >/dev/null || { echo "fuzz: error: clang++ not found (apt-get install clang libfuzzer-14-dev)" >&2; exit 1; }
cmake -S tests/host_only -B $dir -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DHOST_MODE=fuzz \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null || exit 1
cmake --build $dir || exit 1
export ASAN_OPTIONS=detect_leaks=1
run_one() {
  local t=$1 secs=$2 dir=$3
  local name=${t#fuzz_}
  local work=$dir/corpus-run/$name findings=$dir/findings/$name
  rm -rf "$work"; mkdir -p "$work" "$findings"
  cp -r tests/fuzz/corpus/$name/. "$work"/ 2>/dev/null
  # -rss_limit_mb / -malloc_limit_mb: an input that makes a reader allocate beyond them is a
  # finding (a header that claims more than the file holds must be refused before allocating).
  "$dir/$t" "$work" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
    -max_len=65536 -artifact_prefix="$findings/" -print_final_stats=1 > "$dir/$name.log" 2>&1
  local rc=$?
  local execs
  execs=$(grep -m1 "stat::number_of_executed_units" "$dir/$name.log" | awk '{print $2}')
  if [ $rc -eq 0 ]; then
    echo "fuzz: $name: ok, ${execs:-?} executions in ${secs} s"
  else
    echo "fuzz: $name: FINDING (exit $rc), ${execs:-?} executions; $dir/$name.log:"
    grep -E "ERROR|SUMMARY|Test unit written" "$dir/$name.log" | head -5
    return 1
  fi
}
export -f run_one
targets=$(cd $dir && ls fuzz_* | grep -v '\.' )
status=0
printf '%s\n' $targets | xargs -P "$jobs" -I{} bash -c "run_one {} $secs $dir" || status=1
[ $status -eq 0 ] && echo "fuzz: every target ran its ${secs} s with no finding" || echo "fuzz: findings (see above)"
exit $status
