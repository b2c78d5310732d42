#!/usr/bin/env bash
# The batch sweep behind the planner's table, its check and the rooflines, in two parts that each
# fit one GPU call (under 10 minutes on the H100 with 3 repetitions):
#   scripts/batch_sweep.sh BENCH OUT_DIR small   # floors, one-query figures, B = 1 ... 256
#   scripts/batch_sweep.sh BENCH OUT_DIR large   # B = 512 ... 8192
# Every batch/<pipeline>/batch:B and batch_auto/batch:B of those sizes. Then, on any machine:
#   python3 -m scripts.codegen.auto_policy OUT/small.json OUT/large.json          # variants/embeddings/auto_policy.inc
#   python3 -m scripts.codegen.auto_policy --check OUT/small.json OUT/large.json  # auto within 5 % of the best?
#   distancies list --json > reg.json && python3 -m scripts.reports.batch_roofline --registry reg.json OUT/small.json OUT/large.json
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: batch_sweep.sh BENCH OUT_DIR small|large" >&2; exit 2; }
bench=$1 out=$2 part=$3
case "$part" in
  small) filter='^(floor/(read_model|read_model_16bit)/|pipeline/(fused|fused_f16)/|batch(_auto)?/([a-z0-9_]+/)?batch:(1|2|4|8|16|32|64|128|256)/)' ;;
  large) filter='^batch(_auto)?/([a-z0-9_]+/)?batch:(512|1024|2048|4096|8192)/' ;;
  *) echo "batch_sweep: error: the part is small or large, not '$part'" >&2; exit 2 ;;
esac
mkdir -p "$out"
"$bench" --benchmark_filter="$filter" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/$part.json" --benchmark_out_format=json | tee "$out/$part.console.txt"
