#!/usr/bin/env bash
# Run 52 (786d514, run 50's unpacked build; the model's pieces from runs 50, 51 and this call): the Google analogy set on GloVe 6B 50d in one batch
# (batch_i8_filter, auto, batch_f16_filter).
set -u
AB_ROOT=/tmp; P=/tmp/pp/portable; . $P/gpu_env.sh; T=$P/test_batch
O=/tmp/run52; mkdir -p $O
save() { tar czf $OUT/run52.tgz -C /tmp run52; }
cat /tmp/m/m1.part /tmp/m/m2.part .carry/m3.part > /tmp/m/glove.xz
python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('/tmp/m/glove.xz'), open('/tmp/m/glove.bin','wb'))"
sha256sum /tmp/m/glove.bin | tee $O/model.sha256
for v in batch_i8_filter auto batch_f16_filter; do
  timeout 60 $P/distancies query --model /tmp/m/glove.bin --batch /tmp/m/analogy.txt --json -k 1 --variant $v > $O/analogy-$v.jsonl 2> $O/analogy-$v.err
  echo "$v rc=$? $(wc -l < $O/analogy-$v.jsonl) lines; $(tail -c 300 $O/analogy-$v.err | tr '\n' ' ')"
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.csv
save
