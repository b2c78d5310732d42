#!/usr/bin/env python3
"""Per-family table of a benchmark run made once per data family (docs/data.md): rows are the
fixtures (one query and batch pipelines, `auto` with what it chose), columns the families; each
cell the median in ms with the queries redone on a fallback in brackets, and per family the
ratio of `auto` to the best pipeline of the same run at each batch size.

    python scripts/family_report.py results/families/h200/*.json [--md OUT.md]

Each file is one `distancies-bench --family F` run; its context names the family
(`model_family`). Standard library only.
"""
import argparse
import json
import re
import sys
from pathlib import Path

import atomic_write

SUFFIX = re.compile(r"/(min_time|repeats|real_time|manual_time|iterations)[^/]*")
BATCH = re.compile(r"^batch/(?P<p>[^/]+)/batch:(?P<b>\d+)$")
AUTO = re.compile(r"^batch_auto/batch:(?P<b>\d+)$")
MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def medians(doc):
    """name -> (ms, fallbacks, label) of every median in a run."""
    out = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") != "median" or "error_occurred" in b:
            continue
        name = SUFFIX.sub("", b.get("run_name", b["name"]))
        out[name] = (b["real_time"] * MS[b.get("time_unit", "ms")], b.get("fallbacks"), b.get("label", ""))
    return out


def load(paths):
    runs = {}
    for p in paths:
        doc = json.loads(Path(p).read_text())
        ctx = doc.get("context", {})
        family = ctx.get("model_family") or Path(p).stem
        runs[family] = {"medians": medians(doc), "gpu": ctx.get("gpu", "?"), "commit": ctx.get("distancies_commit", "?")}
    return runs


def auto_ratios(m):
    """B -> (auto ms, its choice, best pipeline, best ms) within one run."""
    out = {}
    for name, (ms, _, label) in m.items():
        a = AUTO.match(name)
        if not a:
            continue
        b = a["b"]
        best = min(((v[0], BATCH.match(n)["p"]) for n, v in m.items() if BATCH.match(n) and BATCH.match(n)["b"] == b),
                   default=None)
        if best:
            out[int(b)] = (ms, label, best[1], best[0])
    return out


def cell(v):
    ms, fallbacks, _ = v
    return f"{ms:.3f}" + (f" ({int(fallbacks)})" if fallbacks else "")


def markdown(runs):
    families = list(runs)
    names = []
    for r in runs.values():
        names += [n for n in r["medians"] if n not in names and "/k:" not in n]
    head = "| fixture | " + " | ".join(f"`{f}`" for f in families) + " |"
    lines = [head, "|---|" + "---:|" * len(families)]
    for n in names:
        lines.append(f"| `{n}` | " + " | ".join(cell(runs[f]["medians"][n]) if n in runs[f]["medians"] else "–"
                                                 for f in families) + " |")
    ratios = {f: auto_ratios(runs[f]["medians"]) for f in families}
    for b in sorted({b for r in ratios.values() for b in r}):
        lines.append(f"| auto at B = {b:,}: choice, auto / best | " + " | ".join(
            f"`{ratios[f][b][1]}` {ratios[f][b][0] / ratios[f][b][3]:.2f}" if b in ratios[f] else "–"
            for f in families) + " |")
    gpus = sorted({r["gpu"] for r in runs.values()})
    commits = sorted({r["commit"] for r in runs.values()})
    lines.append("")
    lines.append(f"Medians in ms on {', '.join(gpus)} (commit {', '.join(commits)}); in brackets the queries redone "
                 "on a fallback.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--md")
    args = ap.parse_args(argv)
    try:
        text = markdown(load(args.runs))
    except (OSError, ValueError, KeyError) as e:
        raise SystemExit(f"family_report: {e}") from None
    if args.md:
        atomic_write.write_text(args.md, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
