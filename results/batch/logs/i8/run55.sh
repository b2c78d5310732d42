#!/usr/bin/env bash
# Run 55: the peers at B = 1024 and our batch pipelines at B = 1024 (batch_i8_filter with them), one call.
set -u
rm -rf /tmp/pp; mkdir -p /tmp/pp && tar xzf .carry/slim.tgz -C /tmp/pp
P=/tmp/pp/portable; . $P/gpu_env.sh
O=/tmp/run55; mkdir -p $O
save() { tar czf $OUT/run55.tgz -C /tmp run55; }
timeout 60 $P/distancies-bench --benchmark_filter='^batch(_auto)?/(batch_i8_filter/|batch_f16_filter/|batch_f16_h/|batch_tf32/)?batch:1024/' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out=$O/ours-1024.json --benchmark_out_format=json > $O/ours-1024.console.txt 2>&1
grep median $O/ours-1024.console.txt | awk '{print $1, $2, $3}'; save
timeout 40 $P/distancies gen /tmp/model.dsv > $O/gen.txt 2>&1; echo "gen rc=$?"
timeout 80 python3 scripts/peer_torch_batch.py /tmp/model.dsv --batches 1024 -k 10 --out $O/peers-torch-1024.json > $O/peers-torch.txt 2>&1; echo "torch rc=$?"; grep "median" $O/peers-torch.txt; save
python3 -c "import tarfile; tarfile.open('.carry/faiss-gpu-1.15.1-sm90-bundle.tar.xz').extractall('/tmp', filter='data')"
timeout 80 python3 scripts/peer_faiss.py /tmp/model.dsv --batches 1024 -k 10 --faiss-dir /tmp/faiss-gpu-sm90 --out $O/peers-faiss-1024.json > $O/peers-faiss.txt 2>&1; echo "faiss rc=$?"; grep "median" $O/peers-faiss.txt
save
