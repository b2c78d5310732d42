"""The roofline of every batch pipeline in a committed run: its median time against
max(bytes / bandwidth, FLOP / peak of its precision), as a Markdown table (or JSON).

    distancies list --json > registry.json
    python3 -m scripts.reports.batch_roofline --registry registry.json RUN.json [MORE.json ...] [--json]

What each pipeline must move and compute comes from the registry's traits (`distancies list
--json`: precision, scan, scores, queries per read of the model), so a new pipeline needs no
change here. The model of the work (docs/batch.md, "Rooflines"):

- FLOP: 2 B rows D (the useful multiply-adds; padding not counted).
- bytes: the vectors of the copy the pipeline reads (rows x leading dimension x element size),
  once per `queries_per_model_read` queries (0: once per batch); tile pipelines also write and
  read back every score (2 B rows x score size). Norms and the lists are left out (< 1 %).
- bandwidth: the run's own `floor_gb_per_s` (the read-floor fixture's measured rate).
- peak: dense operations per SM per clock of sm_90 (the Hopper whitepaper: fp32 on the CUDA
  cores 256, TF32 2,048, fp16 and bf16 4,096, int8 and fp8 8,192) x SMs x the SM clock the
  fixture recorded. Other architectures: no peak is assumed and the script says so.

Standard library only.
"""
import argparse
import json
import math
import re
import sys
from pathlib import Path

from scripts.lib.bench_json import BenchError, read_json

BATCH = re.compile(r"^batch/(?P<p>[^/]+)/batch:(?P<b>\d+)(/|$)")
# Dense FLOP per SM per clock, by compute capability and precision.
PEAK_PER_SM_CLOCK = {
    "9.0": {"fp32": 256, "tf32": 2048, "fp16": 4096, "bf16": 4096, "int8": 8192, "fp8": 8192},
}
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i8": 1}
UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def leading_dim(copy, dim):
    """Elements between row starts of each copy (kernels/embeddings/storage.hpp)."""
    step = {"f32": 4, "f16": 8, "bf16": 8, "i8": 16}[copy]
    return (dim + step - 1) // step * step


def batch_traits(registry):
    rows = registry.get("embeddings", {}).get("batch", [])
    out = {r["name"]: r["traits"] for r in rows if "traits" in r}
    if not out:
        sys.exit("batch_roofline: error: the registry JSON has no batch pipelines with traits "
                 "(use `distancies list --json` of this commit)")
    return out


def medians(doc):
    """name -> (median ms, benchmark entry) for every batch fixture of a run."""
    out = {}
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        if "error_occurred" in b or b.get("skipped"):
            continue
        name = b.get("run_name", b["name"]).split("/manual_time")[0]
        if not BATCH.match(name):
            continue
        if b.get("run_type") == "aggregate" or name not in out:
            out[name] = (b["real_time"] * UNIT_MS[b.get("time_unit", "ns")], b)
    return out


def roofline(traits, batch, bench, ctx):
    """(bytes floor ms, flop floor ms, peak TFLOP/s) of one fixture, or None with a reason."""
    rows, dim = int(bench["rows"]), int(bench["dim"])
    precision = traits["precision"]
    copy = traits.get("copy", "f32")
    per_read = int(traits["queries_per_model_read"])
    reads = 1 if per_read == 0 else math.ceil(batch / per_read)
    model = rows * leading_dim(copy, dim) * ELEMENT_BYTES[copy]
    score_bytes = 2 * batch * rows * ELEMENT_BYTES[traits["scores"]] if "scores" in traits else 0
    bw = float(ctx["floor_gb_per_s"]) * 1e9
    bytes_ms = (reads * model + score_bytes) / bw * 1e3
    cc = str(ctx.get("gpu_compute_capability", ""))
    per_sm = PEAK_PER_SM_CLOCK.get(cc, {}).get(precision)
    if per_sm is None:
        return bytes_ms, None, None
    clock_hz = float(bench.get("sm_clock_mhz") or ctx["gpu_max_sm_clock_mhz"]) * 1e6
    peak = per_sm * int(ctx["gpu_sm_count"]) * clock_hz
    flop_ms = 2.0 * batch * rows * dim / peak * 1e3
    return bytes_ms, flop_ms, peak / 1e12


def table(registry, runs):
    traits = batch_traits(registry)
    out = []
    for doc in runs:
        ctx = doc.get("context", {})
        if "floor_gb_per_s" not in ctx:
            sys.exit("batch_roofline: error: a run has no floor_gb_per_s in its context")
        for name, (ms, bench) in medians(doc).items():
            m = BATCH.match(name)
            pipeline, batch = m["p"], int(m["b"])
            if pipeline not in traits:
                continue  # a pipeline this registry no longer has
            bytes_ms, flop_ms, peak = roofline(traits[pipeline], batch, bench, ctx)
            floor = bytes_ms if flop_ms is None else max(bytes_ms, flop_ms)
            out.append({"pipeline": pipeline, "batch": batch, "ms": ms, "bytes_ms": bytes_ms, "flop_ms": flop_ms,
                        "peak_tflops": peak, "floor_ms": floor, "x_floor": ms / floor,
                        "bound": "memory" if flop_ms is None or bytes_ms >= flop_ms else "compute",
                        "commit": ctx.get("distancies_commit", "?"), "gpu": ctx.get("gpu", "?")})
    # A later run's figure replaces an earlier one's (a sweep split over calls, then re-measured).
    merged = {}
    for r in out:
        merged[(r["pipeline"], r["batch"])] = r
    return sorted(merged.values(), key=lambda r: (r["batch"], r["ms"]))


def markdown(rows):
    lines = ["| B | pipeline | ms | bytes / bandwidth | FLOP / peak | bound | × roofline | commit |",
             "|---:|---|---:|---:|---:|---|---:|---|"]
    for r in rows:
        flop = "—" if r["flop_ms"] is None else f"{r['flop_ms']:.3f}"
        lines.append(f"| {r['batch']} | `{r['pipeline']}` | {r['ms']:.3f} | {r['bytes_ms']:.3f} | {flop} | "
                     f"{r['bound']} | {r['x_floor']:.2f} | {r['commit'][:7]} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--registry", type=Path, required=True, help="`distancies list --json` of this commit")
    ap.add_argument("run", type=Path, nargs="+")
    ap.add_argument("--json", action="store_true", help="JSON rows instead of a Markdown table")
    a = ap.parse_args(argv)
    try:
        registry = read_json(a.registry)
        docs = [read_json(r) for r in a.run]
    except BenchError as e:
        sys.exit(f"batch_roofline: error: {e}")
    rows = table(registry, docs)
    if not rows:
        sys.exit("batch_roofline: error: no batch fixture medians in " + ", ".join(map(str, a.run)))
    sys.stdout.write(json.dumps(rows, indent=1) + "\n" if a.json else markdown(rows))


if __name__ == "__main__":
    main()
