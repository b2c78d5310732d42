#!/usr/bin/env bash
# The CPU tests under AddressSanitizer + UndefinedBehaviorSanitizer, built by clang from the host
# code alone (tests/host_only/CMakeLists.txt; no CUDA), and the fuzz corpus replayed the same way.
#   scripts/host_checks.sh [BUILD_DIR=build-host-asan]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-host-asan}
command -v clang++ >/dev/null || { echo "host_checks: error: clang++ not found (apt-get install clang)" >&2; exit 1; }
cmake -S tests/host_only -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DHOST_MODE=asan \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build "$dir"
# halt_on_error: the first finding fails the test; detect_leaks: leaks fail too.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
