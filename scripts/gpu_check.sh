#!/usr/bin/env bash
# On a GPU host, from a portable folder (scripts/pack_portable.sh): runs every test binary,
# compute-sanitizer's four tools over the registry, and a short benchmark; logs go to $OUT
# (or ./gpu-check-out).
#   gpu_check.sh [PORTABLE_DIR=.] [--no-tests] [--no-sanitize] [--no-bench] [--lane=I/N] [--plan]
# --lane=I/N runs lane I's share (I = 0 .. N-1) of the jobs (a test binary, a sanitizer run, the
# benchmark): N lanes, one a GPU, run the whole check in about 1/N of the time, e.g.
#   for i in 0 1 2 3; do CUDA_VISIBLE_DEVICES=$i OUT=out/$i gpu_check.sh . --lane=$i/4 & done; wait
# --plan prints each job's lane and expected seconds ("LANE SECONDS JOB") and runs nothing.
set -uo pipefail
dir=${1:-.}
shift || true
tests=1 sanitize=1 bench=1 lane=0 lanes=1 plan=0
for a in "$@"; do
  case $a in
    --no-tests) tests=0 ;;
    --no-sanitize) sanitize=0 ;;
    --no-bench) bench=0 ;;
    --plan) plan=1 ;;
    --lane=*/*)
      lane=${a#--lane=} lanes=${lane#*/} lane=${lane%/*}
      [[ $lane =~ ^[0-9]+$ && $lanes =~ ^[1-9][0-9]*$ && $lane -lt $lanes ]] ||
        { echo "gpu_check.sh: --lane wants I/N with 0 <= I < N, not '${a#--lane=}'" >&2; exit 2; } ;;
    *) echo "gpu_check.sh: unknown option '$a'" >&2; exit 2 ;;
  esac
done
sanitized="test_gpu_variants test_batch test_batch_pipelines test_model_copies test_list_select \
test_warp_primitives test_intersect_gpu test_i8_keys"
tools="memcheck racecheck initcheck synccheck"

# A job's seconds on an H200 where it takes long (the rest count 3): the lanes share the jobs
# longest first, each to the lane with the fewest seconds so far, so that they end together
# (every lane works the same plan out, so each job runs in exactly one).
cost() {
  case $1 in
    "sanitize memcheck test_gpu_variants") echo 168 ;;
    "test test_batch") echo 150 ;;
    "test test_registry" | "sanitize initcheck test_gpu_variants") echo 130 ;;
    "test test_batch_pipelines" | "sanitize racecheck test_intersect_gpu") echo 85 ;;
    "sanitize racecheck test_list_select" | "bench") echo 60 ;;
    "sanitize racecheck test_i8_keys") echo 3 ;;
    "sanitize racecheck test_"*) echo 40 ;;
    "test test_moments_gpu") echo 40 ;;
    "test test_data_families" | "sanitize memcheck test_intersect_gpu") echo 33 ;;
    "test test_"*intersect* | "test test_gpu_variants" | "test test_range_guard" | "sanitize initcheck test_intersect_gpu") echo 27 ;;
    "test test_centred_copies") echo 21 ;;
    "dead_rank") echo 15 ;;
    *) echo 3 ;;
  esac
}
all_jobs=()
if [ $tests = 1 ]; then
  for t in "$dir"/test_*; do all_jobs+=("test $(basename "$t")"); done
  [ -x "$dir/dead_rank.sh" ] && all_jobs+=("dead_rank")
fi
if [ $sanitize = 1 ]; then
  for tool in $tools; do for t in $sanitized; do all_jobs+=("sanitize $tool $t"); done; done
fi
[ $bench = 1 ] && all_jobs+=("bench")
declare -A lane_of
load=()
for ((i = 0; i < lanes; i++)); do load[i]=0; done
while read -r c j; do
  best=0
  for ((i = 1; i < lanes; i++)); do ((load[i] < load[best])) && best=$i; done
  load[best]=$((load[best] + c))
  lane_of[${all_jobs[j]}]=$best
done < <(for j in "${!all_jobs[@]}"; do echo "$(cost "${all_jobs[j]}") $j"; done | sort -k1,1nr -k2,2n)
mine() { [ "${lane_of[$1]:-x}" = "$lane" ]; }  # this lane's share of the jobs
if [ $plan = 1 ]; then
  for j in "${all_jobs[@]}"; do echo "${lane_of[$j]} $(cost "$j") $j"; done
  exit 0
fi
out=${OUT:-gpu-check-out}
mkdir -p "$out"
. "$dir/gpu_env.sh"  # the packed libraries, then the host's cuBLAS
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv | tee "$out/nvidia-smi.csv"
for t in "$dir"/test_*; do
  [ $tests = 1 ] || break
  name=$(basename "$t")
  mine "test $name" || continue
  t0=$SECONDS  # each binary's seconds: what a device call's time limit has to hold
  if "$t" --gtest_brief=1 >"$out/$name.log" 2>&1; then r=ok; else r=FAILED; status=1; fi
  echo "$name: $r in $((SECONDS - t0)) s ($(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$name.log" | tr '\n' ' '))"
done
if [ $tests = 1 ] && [ -x "$dir/dead_rank.sh" ] && mine dead_rank; then
  # Two GPUs: a rank that dies mid-batch ends the other with one error line (skips with one GPU).
  "$dir/dead_rank.sh" "$dir/distancies" "$out/dead-rank" >"$out/dead_rank.log" 2>&1
  r=$?
  [ $r = 1 ] && status=1
  echo "dead_rank.sh: $(tail -n 1 "$out/dead_rank.log") (exit $r)"
fi
if [ $sanitize = 1 ]; then
  # Small cases cover every registered variant and pipeline; the sanitizer is slow.
  filter='Registry/*d7*:Registry/*rows_lt_k*:Registry/*zero_rows*:Registry/*ties*:Registry/TopkStageTest*/*:FirstMerge*:ReadFloor*:ReducedPrecision.NearTies*:ReducedPrecision.Fp16*'
  batch_filter='Registry/*b5_d7*:Registry/*rows_lt_k*:Registry/*zero_rows*:Registry/*b9_d301*:BatchSearch.Uncertifiable*:BatchSearch.Splits*:BatchSearch.WideRerank*'
  for tool in $tools; do
    for t in $sanitized; do
      mine "sanitize $tool $t" || continue
      f=$filter
      [ $t = test_batch ] && f="$batch_filter:GemmTileScores.*"
      # initcheck does not see cuBLAS's stores into a B = 3 tile's scores (docs/batch.md, "Known,
      # left alone"); GemmTileScores.WritesEveryScoreInitcheckCallsUnwritten holds cuBLAS to them.
      [ $t = test_batch ] && [ $tool = initcheck ] &&
        f="$f-BatchSearch.UncertifiableQueriesFallBackToExact:BatchSearch.WideRerankOffRedoesThePlantedTies"
      [ $t = test_batch_pipelines ] && f='Registry/*b5_d7*:Registry/*rows_lt_k*:Registry/*zero_rows*'
      [ $t = test_model_copies ] && f='Registry/ModelCopyTest.MadeOnce*:Registry/ModelCopyTest.AViews*:ModelCopies.*'
      [ $t = test_list_select ] && f='*'
      [ $t = test_warp_primitives ] && f='*'
      [ $t = test_i8_keys ] && f='*'
      [ $t = test_intersect_gpu ] && f='IntersectGpu.ExactOnTheSmallSet:IntersectGpu.ExactOnTheAdversarialSets'
      t0=$SECONDS
      if compute-sanitizer --tool $tool --error-exitcode 99 "$dir/$t" --gtest_filter="$f" \
          --gtest_brief=1 >"$out/sanitize-$tool-$t.log" 2>&1; then r=clean; else r=ERRORS; status=1; fi
      echo "compute-sanitizer $tool $t: $r in $((SECONDS - t0)) s ($(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize-$tool-$t.log" | tail -1))"
    done
  done
fi
if [ $bench = 1 ] && mine bench; then
  "$dir/distancies-bench" --benchmark_min_time=0.2 --benchmark_out="$out/bench-quick.json" \
    --benchmark_out_format=json >"$out/bench-quick.log" 2>&1 || status=1
  tail -n 40 "$out/bench-quick.log"
fi
exit $status
