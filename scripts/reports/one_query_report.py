"""The one-query pipelines over k, against their read floors, as a Markdown table.

    python3 -m scripts.reports.one_query_report "$(python3 -m scripts.lib.manifest canonical one-query h100)"

Reads the medians of `pipeline/<name>[/k:<k>]` and `floor/read_model*` (k = 10 is the name
without a suffix) and prints total, floor, the ratio, the scan stage, and the fractions of the
timed queries that the certificate answered and that the fp32 fallback answered.
"""
import argparse
import sys

from scripts.lib.bench_json import BenchError, read_json

FLOOR = {"F32": "floor/read_model/manual_time", "16": "floor/read_model_16bit/manual_time",
         "8": "floor/read_model_8bit/manual_time"}
PIPES = [("fused", "F32"), ("fused_f16", "16"), ("fused_bf16", "16"), ("fused_i8", "8")]
KS = [1, 10, 100, 1024, 4096]


def pct(v):
    return "—" if v is None else f"{100 * v:.0f} %"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    a = ap.parse_args()
    try:
        d = read_json(a.json)
    except BenchError as e:
        sys.exit(f"one_query_report: {e}")
    med = {b.get("run_name", b["name"]): b for b in d["benchmarks"] if b.get("aggregate_name") == "median"}
    ctx = d["context"]
    print(f"{ctx.get('gpu')}, driver {ctx.get('nvidia_smi_driver_sm_mem_maxsm_power_pstate', '?').split(',')[0]}, "
          f"commit {ctx.get('distancies_commit')}, {ctx.get('model_rows')} x {ctx.get('model_dim')}, medians\n")
    print("| pipeline | k | total ms | floor ms | × floor | scan ms | certified | fallback |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for p, storage in PIPES:
        for k in KS:
            name = f"pipeline/{p}/manual_time" if k == 10 else f"pipeline/{p}/k:{k}/manual_time"
            b, fl = med.get(name), med.get(FLOOR[storage])
            if not b or not fl:
                continue
            floor = fl["kernel_ms"]
            scan = b.get("fused_scan_topk_ms", b.get("reduced_scan_topk_ms", 0.0))
            print(f"| `{p}` | {k} | {b['total_ms']:.3f} | {floor:.3f} | {b['total_ms'] / floor:.2f} | {scan:.3f} | "
                  f"{pct(b.get('certified_fraction'))} | {pct(b.get('fallback_fraction'))} |")


if __name__ == "__main__":
    main()
