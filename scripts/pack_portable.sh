#!/usr/bin/env bash
# Packs the built binaries and the non-system libraries they need into one folder that runs
# on a GPU host without the build dependencies (binaries carry rpath $ORIGIN).
#   scripts/pack_portable.sh [BUILD_DIR=build] [OUT_DIR=portable]
set -euo pipefail
build=${1:-build}
out=${2:-portable}
[ -d "$build" ] || { echo "pack_portable: no build folder '$build' (build first)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
bins=()
for b in "$build"/harness/cli/distancies "$build"/harness/bench/distancies-bench "$build"/tests/test_* "$build"/tests/hold_gpu_memory; do
  [ -f "$b" ] && [ -x "$b" ] && bins+=("$b")
done
[ ${#bins[@]} -gt 0 ] || { echo "pack_portable: nothing built in '$build'" >&2; exit 1; }
cp "${bins[@]}" "$out"/
# Libraries outside glibc/libstdc++/libgcc, which every Linux host has.
for b in "${bins[@]}"; do
  ldd "$b" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*) ;;
    libcuda.so*|libnvidia-*) ;;  # the driver comes with the host
    libcublas*.so*) ;;  # ~700 MB; the GPU host's CUDA toolkit has them (see gpu_env.sh)
    *) cp -L "$lib" "$out"/ ;;
  esac
done
cp scripts/gpu_check.sh scripts/gpu_env.sh scripts/shard_launch.sh scripts/batch_sweep.sh tests/two_processes.sh \
  tests/scale/dead_rank.sh "$out"/ 2>/dev/null || true
echo "packed $(ls "$out" | wc -l) files into $out ($(du -sh "$out" | cut -f1))"
