# Helpers for a run script on the GPU host (sourced from the repository root there), so that each
# run script says only what it measures (the run scripts are archived: results/manifest.json):
#   . scripts/device_ab.sh NAME PACK.tgz [OLD.tgz]
# unpacks PACK (scripts/pack_portable.sh's portable/ folder, tarred) to $AB_ROOT/pp and OLD, a
# build of an earlier commit to compare with in the same call, to $AB_ROOT/old (AB_ROOT: /tmp
# unless set); sources gpu_env.sh; sets
#   P (the unpacked folder), NEW and OLD (their distancies-bench), T (test_batch), O=$AB_ROOT/NAME
# and defines
#   save                                   # O as $OUT/NAME.tgz (what comes back from the call)
#   run LABEL BINARY [ENV=VALUE ...] FILTER  # distancies-bench, 3 repetitions: O/LABEL.{txt,json},
#                                          # its medians and fallback counters on stdout
set -u
ab_name=$1 ab_root=${AB_ROOT:-/tmp}
mkdir -p $ab_root/pp && tar xzf "$2" -C $ab_root/pp
if [ $# -ge 3 ]; then mkdir -p $ab_root/old && tar xzf "$3" -C $ab_root/old; fi
P=$ab_root/pp/portable; . $P/gpu_env.sh
NEW=$P/distancies-bench OLD=$ab_root/old/portable/distancies-bench T=$P/test_batch
O=$ab_root/$ab_name; mkdir -p $O
save() { tar czf $OUT/$ab_name.tgz -C $ab_root $ab_name; }
run() {
  local name=$1 bin=$2; shift 2; local filter=${!#}; local envs=("${@:1:$#-1}")
  env "${envs[@]}" LD_LIBRARY_PATH=$(dirname $bin):${LD_LIBRARY_PATH:-} timeout 60 $bin --benchmark_filter="$filter" \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$O/$name.json --benchmark_out_format=json > $O/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "median|rror" $O/$name.txt | awk '{print $1, $2, $3}' | head -8
  grep -o "fallbacks=[0-9.e+-]*" $O/$name.txt | sort | uniq -c | tr '\n' ' '; echo
}
#   gtest LABEL SECONDS FILTER [ENV=VALUE ...]  # test_batch's FILTER: O/LABEL.log, its verdict on stdout
# and FILTER_TESTS, the filtered scan's tests (every walk it can take, the oracle cases, the seeds).
FILTER_TESTS='*ilter*:*Gemm*:*Seeded*:*Ties*:*Uncertif*'
gtest() {
  local name=$1 secs=$2 filter=$3; shift 3
  env X=1 "$@" timeout $secs $T --gtest_filter="$filter" > $O/$name.log 2>&1; echo "rc=$?" >> $O/$name.log
  echo "== $name"; grep -E "FAILED|PASSED|rc=" $O/$name.log | head; save
}
#   ncu_walk LABEL FILTER   # ncu of the 4th wgmma walk launch of NEW's FILTER (the second search's
#                           # last pass): O/details.txt and O/sass.csv (scripts/analysis/ncu_sass_stalls.py)
ncu_walk() {
  local name=$1 filter=$2 N=/usr/local/cuda/bin/ncu
  timeout 150 $N --clock-control none --kernel-name regex:wgmma_filter --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats --import-source no \
    -o $O/$name -f $NEW --benchmark_filter="$filter" --benchmark_min_time=0.01 > $O/ncu.txt 2>&1; echo "ncu rc=$?"
  $N --import $O/$name.ncu-rep --page details > $O/details.txt 2>&1
  $N --import $O/$name.ncu-rep --page source --csv --print-source sass > $O/sass.csv 2>$O/sass.err
  rm -f $O/$name.ncu-rep; save
  grep -E "Duration|Compute \(SM\) Throughput|Issued Warp|Warp Cycles Per Issued" $O/details.txt | head -8
}
#   peers FILTER   # NEW's FILTER at B = 1,024 (O/ours-1024.{json,console.txt}), then `distancies gen`
#                  # of the same synthetic model and the PyTorch and FAISS peers at 1,024
#                  # (O/peers-{torch,faiss}-1024.json; the FAISS bundle carried in .carry/)
peers() {
  local filter=$1
  timeout 60 $NEW --benchmark_filter="$filter" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out=$O/ours-1024.json --benchmark_out_format=json > $O/ours-1024.console.txt 2>&1
  grep median $O/ours-1024.console.txt | awk '{print $1, $2, $3}'; save
  timeout 40 $P/distancies gen /tmp/model.dsv > $O/gen.txt 2>&1; echo "gen rc=$?"
  timeout 80 python3 -m scripts.peers.peer_torch_batch /tmp/model.dsv --batches 1024 -k 10 --out $O/peers-torch-1024.json \
    > $O/peers-torch.txt 2>&1; echo "torch rc=$?"; grep "median" $O/peers-torch.txt; save
  python3 -c "import tarfile; tarfile.open('.carry/faiss-gpu-1.15.1-sm90-bundle.tar.xz').extractall('/tmp', filter='data')"
  timeout 80 python3 -m scripts.peers.peer_faiss /tmp/model.dsv --batches 1024 -k 10 --faiss-dir /tmp/faiss-gpu-sm90 \
    --out $O/peers-faiss-1024.json > $O/peers-faiss.txt 2>&1; echo "faiss rc=$?"; grep "median" $O/peers-faiss.txt
  save
}
