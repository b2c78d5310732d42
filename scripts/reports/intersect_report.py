"""The posting-list study's report from distancies-bench JSON (the intersect/ families).

Writes OUT/intersection.md: the study's table (ms for its 1,000 queries, serial / coarse / fine
for SVS, ADP and Hash(512)) with ours beside it on the same-shaped data (GOV2-shaped by default),
our batched variants, the floor and the two goals (batch >= 1,000x serial SVS, <= 1.5x the floor);
and two plots: time vs list-length ratio and time vs query length (the intersect_shape/ fixtures).

  intersect_report.py BENCH.json --out results/intersection [--set gov2]
"""
from __future__ import annotations

import argparse
import os
import re
import sys

from scripts.lib.bench_json import BenchError, load
from scripts.lib.plot_style import distinct_colours, stamp

# The study's figures (part 2, tables 1 and 2): ms for its 1,000 GOV2 queries, MX450 + i5-11300H.
STUDY = {"svs": {"serial": 4379.99, "coarse": 199.27, "fine": 237.43},
         "adp": {"serial": 3395.6, "coarse": 180.24, "fine": 199.13},
         "hash": {"serial": 15422.8, "coarse": 361.25, "fine": 749.41}}
ALGORITHMS = ["svs", "adp", "hash"]
GRAINS = ["serial", "coarse", "fine", "coarse_batch", "fine_batch"]
GOAL_SPEEDUP, GOAL_FLOOR = 1000.0, 1.5


def ms(run, name):
    b = run.get(name)
    return None if b is None else b.center("real_time")


def fmt(v, digits=3):
    return "—" if v is None else f"{v:.{digits}f}"


def table(run, data_set):
    def ours(alg, grain, mem=""):
        return ms(run, f"intersect/{alg}/{grain}/set:{data_set}{mem}")

    lines = [f"## The study's table, and ours on set:{data_set}", "",
             "ms for the whole query set (the study: its 1,000 GOV2 queries on an MX450; ours: the median "
             "of the run's repetitions). Speed-up is over the same row's serial time.", "",
             "| algorithm | study serial | study coarse | study fine | serial | coarse | coarse managed | fine "
             "| fine managed | coarse batch | fine batch | best speed-up |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for alg in ALGORITHMS:
        s = STUDY[alg]
        row = [ours(alg, g) for g in GRAINS]
        managed = [ours(alg, g, "/mem:managed") for g in ("coarse", "fine")]
        gpu = [v for v in row[1:] if v]
        best = f"{row[0] / min(gpu):.0f}x" if row[0] and gpu else "—"
        name = alg.upper() if alg != "hash" else "Hash(512)"
        lines.append(f"| {name} | {s['serial']} | {s['coarse']} | {s['fine']} | "
                     f"{fmt(row[0])} | {fmt(row[1])} | {fmt(managed[0])} | {fmt(row[2])} | {fmt(managed[1])} | "
                     f"{fmt(row[3])} | {fmt(row[4])} | {best} |")
    lines.append("")
    floor = ms(run, f"intersect/floor/set:{data_set}")
    lines += ["| fixture | ms | GB/s | floor ratio | queries/s |", "|---|---:|---:|---:|---:|"]
    for n, b in sorted(run.family("intersect/").items()):
        if not n.endswith(f"/set:{data_set}"):
            continue
        lines.append(f"| {n} | {fmt(b.center('real_time'), 4)} | {fmt(b.center('gb_per_s'), 1)} | "
                     f"{fmt(b.center('floor_ratio'), 2)} | {fmt(b.center('queries_per_s'), 0)} |")
    lines.append("")
    serial = ours("svs", "serial")
    batch = {n: b.center("real_time") for n, b in run.family("intersect/").items()
             if n.endswith(f"_batch/set:{data_set}")}
    if serial and batch:
        name, best = min(batch.items(), key=lambda kv: kv[1])
        ratio = best / floor if floor else None
        lines += [f"Goals on set:{data_set}: the best batch ({name}) is {serial / best:.0f}x serial SVS "
                  f"(goal >= {GOAL_SPEEDUP:.0f}x: {'met' if serial / best >= GOAL_SPEEDUP else 'not met'}) and "
                  + (f"{ratio:.2f}x the floor of reading every touched list once (goal <= {GOAL_FLOOR}x: "
                     f"{'met' if ratio <= GOAL_FLOOR else 'not met'})." if ratio else "no floor fixture ran."), ""]
    return "\n".join(lines)


def shape_series(run, axis):
    """{variant: [(x, ms), ...]} from intersect_shape/<variant>/<axis>:<x>."""
    out = {}
    pat = re.compile(rf"^intersect_shape/([^/]+)/{axis}:(\d+)$")
    for n, b in run.family("intersect_shape/").items():
        m = pat.match(n)
        if m:
            out.setdefault(m.group(1), []).append((int(m.group(2)), b.center("real_time")))
    return {k: sorted(v) for k, v in sorted(out.items())}


def plot(series, xlabel, title, path, logx, context=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (name, pts), colour in zip(series.items(), distinct_colours(len(series)), strict=True):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name, color=colour)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("ms for the query set")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    stamp(fig, context or {}, "study: MX450 + i5-11300H (its own GOV2 queries)")
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", help="distancies-bench --benchmark_out JSON")
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--set", default="gov2", help="data set of the study's table (small, gov2, real)")
    a = ap.parse_args(argv)
    try:
        run = load(a.bench)
    except BenchError as e:
        sys.exit(f"intersect_report.py: error: {e}")
    if not run.family("intersect/"):
        sys.exit(f"intersect_report.py: error: {a.bench} has no intersect/ fixtures "
                 "(run distancies-bench --benchmark_filter='^intersect')")
    os.makedirs(a.out, exist_ok=True)
    md = ["# Posting-list intersection", "", table(run, a.set)]
    for axis, xlabel, title, logx in (
            ("ratio", "|long list| / |short list|",
             "Time vs list-length ratio (100 queries of 2 lists, short list 500 ids)", True),
            ("terms", "terms per query", "Time vs query length (1,000 queries, lists of ~20,000 ids)", False)):
        series = shape_series(run, axis)
        if series:
            png = f"intersect_time_vs_{axis}.png"
            plot(series, xlabel, title, os.path.join(a.out, png), logx, run.context)
            md += [f"![{title}]({png})", ""]
    errs = {n: e for n, e in run.errors().items() if n.startswith("intersect")}
    if errs:
        md += ["Fixtures that failed:", ""] + [f"- {n}: {e}" for n, e in sorted(errs.items())] + [""]
    with open(os.path.join(a.out, "intersection.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))
    print(os.path.join(a.out, "intersection.md"))


if __name__ == "__main__":
    main()
