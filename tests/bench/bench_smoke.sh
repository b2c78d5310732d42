#!/bin/sh
# distancies-bench on a GPU, small model, cold mode: the engine's counters are in the JSON, the
# k:1024 16-bit scan is skipped with its reason, and the context names the mode and the NVML
# status. Exit 77 (CTest: Skipped) without a GPU.
cli=$1 bench=$2 out=$3
if ! "$cli" device >/dev/null 2>&1; then
  echo "SKIPPED: no usable CUDA GPU ($("$cli" device 2>&1 | tail -n 1))"
  exit 77
fi
# Noise-based stopping registers every family too (one iteration each, no minimum times).
"$bench" --rows 200000 --target-rsd 1 --benchmark_list_tests >/dev/null || { echo "distancies-bench --target-rsd failed"; exit 1; }
"$bench" --rows 200000 --mode cold --benchmark_min_time=0.05 \
  --benchmark_filter='^(floor/read_model|dot/warp_shuffle_dot|topk/reduced_scan_topk/k:(10|1024)|pipeline/V4)/manual_time$' \
  --benchmark_out="$out" --benchmark_out_format=json >/dev/null || { echo "distancies-bench failed"; exit 1; }
python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
ctx, runs = doc["context"], {b["name"].split("/manual_time")[0].split("/iterations:")[0]: b for b in doc["benchmarks"]}
assert ctx["measure_mode"] == "cold", ctx
assert ctx["nvml"], "the context must say whether NVML readings exist"
for name in ("floor/read_model", "dot/warp_shuffle_dot", "topk/reduced_scan_topk/k:10", "pipeline/V4"):
    b = runs[name]
    assert not b.get("error_occurred") and not b.get("skipped"), (name, b)
    assert b["cold"] == 1 and b["samples"] >= 1 and "rows" in b, (name, b)
    if ctx["nvml"].startswith("on "):
        assert b["sm_clock_mhz"] > 0 and "throttled_samples" in b, (name, b)
    else:
        assert "sm_clock_mhz" not in b, (name, b)
k1024 = runs["topk/reduced_scan_topk/k:1024"]
msg = k1024.get("skip_message") or k1024.get("error_message") or ""
assert "fallback flag" in msg and k1024.get("real_time", 0) == 0, k1024
print("bench smoke ok:", ctx["nvml"])
PY
