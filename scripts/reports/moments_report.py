"""Report of the moments study (docs/moments.md): log-log plots of time against elements per
column group (our variants, the read floor and the peers), the study's findings restated
with what this run shows, the goals of issue 12 with pass/fail, and the error table.

    python -m scripts.reports.moments_report BENCH.json [--peers PEERS.json] --out DIR

BENCH.json: distancies-bench --benchmark_filter='^moments/' --benchmark_out_format=json;
PEERS.json: scripts/peers/peer_moments.py. Writes DIR/moments_report.md and DIR/moments_*.png.
"""
import argparse
import math
import re
import statistics
import sys
from pathlib import Path

from scripts.lib.bench_json import BenchError, read_json
from scripts.lib.plot_style import distinct_colours, stamp

NAME = re.compile(r"^(?P<family>moments|peer_moments)/(?P<who>[^/]+)/rows:(?P<rows>\d+)/cols:(?P<cols>\d+)$")
# What Google Benchmark appends to a fixture's name (UseManualTime, MinTime, ...).
GB_SUFFIX = re.compile(r"/(?:iterations:\d+|repeats:\d+|threads:\d+|min_time:[0-9.]+s?|min_warmup_time:[0-9.]+s?"
                       r"|manual_time|real_time|process_time)$")


def base_name(name):
    """'moments/one_pass/rows:4/cols:300/min_time:0.050/manual_time' -> 'moments/one_pass/rows:4/cols:300'."""
    while True:
        stripped = GB_SUFFIX.sub("", name)
        if stripped == name:
            return name
        name = stripped

# The study's card and figures (seeds/gpu-moments-report.hu.txt).
STUDY_CARD = "NVIDIA GeForce RTX 3050 Laptop GPU (sm_86, 16 SMs, 4 GiB, 128-bit bus), 512 threads x 48 blocks"
STUDY_FINDINGS = [
    ("small", "Small inputs: time flat at ~10 ms (threads idle); Torch picks smaller launches and is faster there"),
    ("warp", "A significant speed-up at >= 32 columns (a warp's lanes on distinct columns)"),
    ("linear", "Large inputs: linear growth, bound by memory bandwidth"),
    ("torch", "PyTorch slower on very large inputs"),
]


def load(path):
    try:
        doc = read_json(path)
    except BenchError as e:
        raise SystemExit(f"moments_report: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise SystemExit(f"moments_report: {path}: no 'benchmarks' list")
    return doc


def collect(doc):
    """{(family, who, rows, cols): {metric: median over repetitions}}; aggregates other than
    the median and errored entries are ignored."""
    samples = {}
    for e in doc["benchmarks"]:
        m = NAME.match(base_name(e.get("run_name", e.get("name", ""))))
        if not m or e.get("error_occurred"):
            continue
        if e.get("run_type") == "aggregate" and e.get("aggregate_name") != "median":
            continue
        key = (m["family"], m["who"], int(m["rows"]), int(m["cols"]))
        slot = samples.setdefault(key, {})
        for k, v in e.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                slot.setdefault(k, []).append(float(v))
        if "kernel_ms" not in e and "real_time" in e:  # Google Benchmark's own time, in its unit
            scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[e.get("time_unit", "ms")]
            slot.setdefault("kernel_ms", []).append(float(e["real_time"]) * scale)
    return {k: {m: statistics.median(v) for m, v in d.items()} for k, d in samples.items()}


def series(data, family, who, cols):
    pts = sorted((k[2] * k[3], d) for k, d in data.items() if k[0] == family and k[1] == who and k[3] == cols)
    return pts


def nearest(data, family, who, cols, elements):
    """The entry of that family/who/cols whose element count is closest (log scale) to `elements`."""
    pts = series(data, family, who, cols)
    if not pts:
        return None
    return min(pts, key=lambda p: abs(math.log(p[0]) - math.log(elements)))[1]


def fmt(v, spec=".3g"):
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def plots(data, out, context=None):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("moments_report: matplotlib absent: no plots", file=sys.stderr)
        return []
    cols_all = sorted({k[3] for k in data})
    whos = sorted({(k[0], k[1]) for k in data})
    n = len(cols_all)
    if n == 0:
        return []
    w = min(3, n)
    h = (n + w - 1) // w
    # One colour per series, the same in every panel.
    colour = dict(zip(whos, distinct_colours(len(whos)), strict=True))
    fig, axes = plt.subplots(h, w, figsize=(5 * w, 3.8 * h), squeeze=False)
    for ax, cols in zip(axes.flat, cols_all, strict=False):  # the grid may have spare panels
        for family, who in whos:
            pts = series(data, family, who, cols)
            if not pts:
                continue
            style = "--" if family == "peer_moments" else ("k:" if who == "floor" else "-")
            label = ("peer " if family == "peer_moments" else "") + who
            ax.loglog([p[0] for p in pts], [p[1]["kernel_ms"] for p in pts], style, marker=".", label=label,
                      color=colour[(family, who)])
        ax.set_title(f"{cols} column{'s' if cols > 1 else ''}")
        ax.set_xlabel("elements")
        ax.set_ylabel("time per call (ms)")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    stamp(fig, context or {}, "study: " + STUDY_CARD)
    path = out / "moments_time_by_cols.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    names = [path.name]
    # The study's other view: time against the column count at the largest size.
    largest = max(k[2] * k[3] for k in data)
    if len(cols_all) > 1:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for family, who in whos:
            pts = [(c, nearest(data, family, who, c, largest)) for c in cols_all]
            pts = [(c, d["kernel_ms"]) for c, d in pts if d is not None]
            if len(pts) < 2:
                continue
            style = "--" if family == "peer_moments" else ("k:" if who == "floor" else "-")
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], style, marker=".",
                      label=("peer " if family == "peer_moments" else "") + who, color=colour[(family, who)])
        ax.set_title(f"~{largest:.3g} elements")
        ax.set_xlabel("columns")
        ax.set_ylabel("time per call (ms)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        stamp(fig, context or {}, "study: " + STUDY_CARD.split(",")[0])
        path = out / "moments_time_vs_cols.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        names.append(path.name)
    return names


def findings(data):
    """Rows (finding, study, this run) and the goals (goal, measured, met)."""
    rows, goals = [], []
    big = 1 << 28
    # Small inputs: the slowest one-pass call at <= 2^16 elements, any column count.
    small = [d["kernel_ms"] for k, d in data.items() if k[:2] == ("moments", "one_pass") and k[2] * k[3] <= 1 << 16]
    small_us = max(small) * 1e3 if small else None
    rows.append((STUDY_FINDINGS[0][1], "~10 ms", f"one_pass at <= 2^16 elements: at most {fmt(small_us)} us per call"))
    goals.append(("small inputs (<= 2^16 elements) <= 30 us per call", f"{fmt(small_us)} us",
                  small_us is not None and small_us <= 30))
    # Warp effect: elements/ms at 31, 32, 33 columns at the largest size.
    rates = {c: nearest(data, "moments", "one_pass", c, big) for c in (31, 32, 33)}
    seed = {c: nearest(data, "moments", "two_pass", c, big) for c in (31, 32, 33)}
    def rate(d):
        return d["elements_per_ms"] if d and "elements_per_ms" in d else None
    rows.append((STUDY_FINDINGS[1][1], "speed-up at 32 columns",
                 "elements/ms at 31/32/33 columns, largest size: two_pass "
                 + "/".join(fmt(rate(seed[c]), ".3g") for c in (31, 32, 33)) + "; one_pass "
                 + "/".join(fmt(rate(rates[c]), ".3g") for c in (31, 32, 33))))
    # Memory bound: floor ratios at 2^28 elements, 300 columns.
    one = nearest(data, "moments", "one_pass", 300, big)
    two = nearest(data, "moments", "two_pass", 300, big)
    fr1 = one.get("floor_ratio") if one else None
    fr2 = two.get("floor_ratio") if two else None
    rows.append((STUDY_FINDINGS[2][1], "linear",
                 f"300 columns, 2^28 elements: one_pass {fmt(fr1)}x the read floor "
                 f"({fmt(one and one.get('gb_per_s'))} GB/s), "
                 f"two_pass {fmt(fr2)}x"))
    goals.append(("one_pass <= 1.15x the read floor (2^28 elements, 300 columns)", f"{fmt(fr1)}x",
                  fr1 is not None and fr1 <= 1.15))
    goals.append(("two_pass <= 2.3x the read floor (2^28 elements, 300 columns)", f"{fmt(fr2)}x",
                  fr2 is not None and fr2 <= 2.3))
    # Peers at 2^28 elements, 300 columns.
    ours = one["kernel_ms"] if one else None
    for peer, need in (("torch_gpu", 3.0), ("cupy", 2.0)):
        p = nearest(data, "peer_moments", peer, 300, big)
        speedup = p["kernel_ms"] / ours if p and ours else None
        goals.append((f">= {need:g}x {peer} (2^28 elements, 300 columns)", f"{fmt(speedup)}x",
                      speedup is not None and speedup >= need))
        if peer == "torch_gpu":
            rows.append((STUDY_FINDINGS[3][1], "Torch slower when very large",
                         f"torch_gpu {fmt(p and p['kernel_ms'])} ms vs one_pass {fmt(ours)} ms: {fmt(speedup)}x"))
    return rows, goals


def error_table(data):
    whos = sorted({k[1] for k in data if k[0] in ("moments", "peer_moments") and k[1] != "floor"})
    lines = ["| variant or peer | mean | variance | skewness | kurtosis |", "|---|---|---|---|---|"]
    for who in whos:
        vals = [max((d[f"rel_error_{s}"] for k, d in data.items() if k[1] == who and f"rel_error_{s}" in d),
                    default=None) for s in ("mean", "variance", "skewness", "kurtosis")]
        lines.append(f"| {who} | " + " | ".join(fmt(v, ".1e") for v in vals) + " |")
    return lines


def peer_table(data, cols=300, elements=1 << 28):
    """Every variant and peer at one shape: device time, time with the transfers, speed of one_pass."""
    ours = nearest(data, "moments", "one_pass", cols, elements)
    lines = [f"| at {cols} columns, ~2^{round(math.log2(elements))} elements | device ms | with transfers ms "
             "| one_pass is faster by |", "|---|---|---|---|"]
    for family, who in sorted({(k[0], k[1]) for k in data}):
        d = nearest(data, family, who, cols, elements)
        if d is None:
            continue
        total = d.get("total_ms") if family == "peer_moments" else None
        ratio = d["kernel_ms"] / ours["kernel_ms"] if ours else None
        label = ("peer " if family == "peer_moments" else "") + who
        lines.append(f"| {label} | {fmt(d['kernel_ms'], '.4g')} | {fmt(total, '.4g')} | {fmt(ratio)}x |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", help="distancies-bench JSON with the moments/ fixtures")
    ap.add_argument("--peers", help="scripts/peers/peer_moments.py JSON")
    ap.add_argument("--out", required=True, help="output directory")
    a = ap.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ours = load(a.bench)
    data = collect(ours)
    ctx = ours.get("context", {})
    if a.peers:
        data.update(collect(load(a.peers)))
    if not any(k[0] == "moments" for k in data):
        raise SystemExit(f"moments_report: {a.bench}: no moments/ fixtures")
    figs = plots(data, out, ctx)
    rows, goals = findings(data)
    card = ctx.get("gpu", "this run's GPU")
    if "gpu_sm_count" in ctx:
        card += f" ({ctx['gpu_sm_count']} SMs, {float(ctx.get('gpu_memory_gib', 0)):.0f} GiB)"
    md = ["# Column moments: the study beside this run", "",
          f"Study: {STUDY_CARD}.  ", f"This run: {card}.", "", "## The study's findings", "",
          "| finding | study | this run |", "|---|---|---|"]
    md += [f"| {f} | {s} | {o} |" for f, s, o in rows]
    md += ["", "## Goals (issue 12)", "", "| goal | measured | met |", "|---|---|---|"]
    md += [f"| {g} | {m} | {'yes' if ok else 'no'} |" for g, m, ok in goals]
    md += ["", "## Side by side (transfers: peers only; ours keep the matrix on the device)", ""]
    md += peer_table(data)
    md += ["", "## Largest error against the fp64 oracle (all shapes)", ""] + error_table(data)
    md += [""] + [f"![{f}]({f})" for f in figs]
    (out / "moments_report.md").write_text("\n".join(md) + "\n")
    print(out / "moments_report.md")


if __name__ == "__main__":
    main()
