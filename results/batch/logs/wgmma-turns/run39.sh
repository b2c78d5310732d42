#!/usr/bin/env bash
# Run 39 (010f03b): the peers at B = 1024 and our batch pipelines at B = 1024, one call.
set -u
mkdir -p /tmp/pp && tar xzf .carry/slim.tgz -C /tmp/pp
P=/tmp/pp/portable; . $P/gpu_env.sh
O=/tmp/o39; mkdir -p $O
save() { tar czf $OUT/o39.tgz -C /tmp o39; }
timeout 60 $P/distancies-bench --benchmark_filter='^batch(_auto)?/(batch_f16_filter/|batch_f16_h/|batch_tf32/)?batch:1024/' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out=$O/ours-1024.json --benchmark_out_format=json > $O/ours-1024.console.txt 2>&1
grep median $O/ours-1024.console.txt | awk '{print $1, $2, $3}'; save
timeout 40 $P/distancies gen /tmp/model.dsv > $O/gen.txt 2>&1; echo "gen rc=$?"
timeout 80 python3 scripts/peer_torch_batch.py /tmp/model.dsv --batches 1024 -k 10 --out $O/peers-torch-1024.json > $O/peers-torch.txt 2>&1; echo "torch rc=$?"; grep "median" $O/peers-torch.txt; save
python3 -c "import tarfile; tarfile.open('.carry/faiss-gpu-1.15.1-sm90-bundle.tar.xz').extractall('/tmp', filter='data')"
timeout 80 python3 scripts/peer_faiss.py /tmp/model.dsv --batches 1024 -k 10 --faiss-dir /tmp/faiss-gpu-sm90 --out $O/peers-faiss-1024.json > $O/peers-faiss.txt 2>&1; echo "faiss rc=$?"; grep "median" $O/peers-faiss.txt
save
for r in 24 16; do
  DISTANCIES_GEMM_REFINE=$r timeout 60 $P/distancies-bench --benchmark_filter='^batch/batch_f16_filter/batch:(200|256|300)/' --benchmark_repetitions=30 \
    --benchmark_report_aggregates_only=true > $O/stress-refine$r.txt 2>&1
  echo "stress refine $r rc=$?"; grep -E "median|rror" $O/stress-refine$r.txt | awk '{print $1, $2, $3}'; grep -o "fallbacks=[0-9.e+-]*" $O/stress-refine$r.txt | sort | uniq -c
done
save
