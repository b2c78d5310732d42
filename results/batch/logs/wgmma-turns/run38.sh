#!/usr/bin/env bash
# Run 38: the Google analogy set on GloVe 6B 50d, one batch, every batch pipeline and auto.
set -u
O=/tmp/o38; mkdir -p $O
save() { tar czf $OUT/o38.tgz -C /tmp o38; }
cat /tmp/m/m1.part .carry/an/m2.part > /tmp/m/glove.xz
python3 -c "import lzma,shutil; shutil.copyfileobj(lzma.open('/tmp/m/glove.xz'), open('/tmp/m/glove.bin','wb'))"
sha256sum /tmp/m/glove.bin | tee $O/model.sha256
P=/tmp/pp/portable; . $P/gpu_env.sh
for v in auto batch_f16_filter batch_f16_h batch_tf32 batch_f16_fused batch_fused_loop; do
  timeout 60 $P/distancies query --model /tmp/m/glove.bin --batch .carry/an/analogy.txt --json -k 1 --variant $v > $O/analogy-$v.jsonl 2> $O/analogy-$v.err
  echo "$v rc=$? $(wc -l < $O/analogy-$v.jsonl) lines; $(tail -c 300 $O/analogy-$v.err | tr '\n' ' ')"
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $O/gpu.csv
save
