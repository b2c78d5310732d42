"""Streamed and sharded search (docs/scale.md) from distancies-bench JSON: the stream/,
stream_sweep/, shard/ and floor/h2d_pinned fixtures, with the in-memory batch/ and pipeline/
figures of the same run as the reference. Several JSON files may be given (the large-model run
is its own); each table names the file its rows come from.

Writes OUT/scale.md: streaming against the pinned host-to-device floor and the goals (one query
>= 85 % of the floor's bandwidth; batches <= 1.2 x max(copy time, in-memory batch time)), the
chunk policy's sweep, the model larger than the GPU, and the sharded rows with their scaling
efficiency (G = 1 is the path's overhead over one resident GPU).

  scale_report.py h100-scale.json [h100-stream-75m.json ...] --out results/scale
"""
from __future__ import annotations

import argparse
import os
import re
import sys

from scripts.lib.bench_json import BenchError, describe_context, load

GOAL_H2D, GOAL_BATCH = 0.85, 1.2


def fmt(v, digits=3):
    return "—" if v is None else f"{v:.{digits}f}"


def center(b, metric):
    return b.center(metric) if b is not None and b.has(metric) else None


def stream_rows(run, floor_gbps):
    """Each stream/ fixture against the copy floor and the resident search: a dict a row."""
    rows = []
    pat = re.compile(r"^stream/([^/]+)/(memory:half|rows:\d+)(?:/batch:(\d+))?$")
    for name, b in run.family("stream/").items():
        m = pat.match(name)
        if not m:
            continue
        pipe, batch, half = m.group(1), m.group(3), m.group(2) == "memory:half"
        ms, gbps = center(b, "real_time"), center(b, "h2d_gb_per_s")
        frac = gbps / floor_gbps if gbps and floor_gbps else None
        copy_ms = center(b, "bytes") / (floor_gbps * 1e6) if floor_gbps and center(b, "bytes") else None
        resident = run.get(f"batch/{pipe}/batch:{batch}") if batch else run.get(f"pipeline/{pipe}")
        mem_ms = center(resident, "real_time") if half else None
        ratio = ms / max(copy_ms, mem_ms or 0) if copy_ms else None
        rows.append({"name": name, "pipeline": pipe, "batch": batch, "half": half, "ms": ms, "gbps": gbps,
                     "fraction": frac, "chunks": center(b, "chunks"), "copy_ms": copy_ms, "memory_ms": mem_ms,
                     "ratio": ratio})
    return rows


def floor_of(runs):
    """floor/h2d_pinned's GB/s: the first run that has the fixture."""
    for r in runs:
        if r.get("floor/h2d_pinned") is not None:
            return center(r.get("floor/h2d_pinned"), "gb_per_s")
    return None


def one_query_fraction(runs):
    """The goal's figure: the least share of the copy floor's bandwidth a streamed one-query row
    reaches (a model twice the memory given to it)."""
    vals = [r["fraction"] for r in stream_rows(runs[0], floor_of(runs))
            if r["half"] and not r["batch"] and r["fraction"]]
    if not vals:
        raise ValueError("no stream/<pipeline>/memory:half row with a bandwidth")
    return min(vals), "stream/*/memory:half (the least)"


def batch_ratio(runs):
    """The goal's figure: the largest time over max(copy floor, resident batch) at B = 1,024."""
    vals = [r["ratio"] for r in stream_rows(runs[0], floor_of(runs))
            if r["half"] and r["batch"] == "1024" and r["ratio"]]
    if not vals:
        raise ValueError("no stream/<pipeline>/memory:half/batch:1024 row with a copy floor")
    return max(vals), "stream/*/memory:half/batch:1024 (the largest)"


def streaming(run, floor_run):
    floor_gbps = center(floor_run.get("floor/h2d_pinned"), "gb_per_s") if floor_run else None
    where = "" if floor_run is run or not floor_run else f" from {os.path.basename(floor_run.path)}"
    lines = [f"## Streaming ({os.path.basename(run.path)})", "",
             f"Floor{where}: `floor/h2d_pinned` {fmt(floor_gbps, 2)} GB/s (the page-locked model copied to the GPU, "
             "nothing else). Copy floor = the streamed bytes at that rate; in-memory = the same pipeline and "
             "batch with the model resident (`batch/…`, `pipeline/…`).", "",
             "| fixture | ms | GB/s | of floor | chunks | copy floor ms | in-memory ms | ms / max(copy, in-memory) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    goals = []
    for r in stream_rows(run, floor_gbps):
        lines.append(f"| {r['name']} | {fmt(r['ms'], 2)} | {fmt(r['gbps'], 2)} | {fmt(r['fraction'], 3)} | "
                     f"{fmt(r['chunks'], 0)} | {fmt(r['copy_ms'], 2)} | {fmt(r['memory_ms'], 3)} | "
                     f"{fmt(r['ratio'], 3)} |")
        frac, ratio, pipe = r["fraction"], r["ratio"], r["pipeline"]
        if r["half"] and not r["batch"] and frac:
            goals.append(f"one query, `{pipe}`: {frac:.1%} of the floor's bandwidth (goal >= {GOAL_H2D:.0%}: "
                         f"{'met' if frac >= GOAL_H2D else 'not met'})")
        if r["half"] and r["batch"] == "1024" and ratio:
            goals.append(f"B = 1024, `{pipe}`: {ratio:.3f} x max(copy, in-memory) (goal <= {GOAL_BATCH}: "
                         f"{'met' if ratio <= GOAL_BATCH else 'not met'})")
    if len(lines) == 6:  # no stream/ rows
        return []
    lines.append("")
    if goals:
        lines += ["Goals (model 2 x the GPU memory given to it): " + "; ".join(goals) + ".", ""]
    return lines


def sweep(run):
    pat = re.compile(r"^stream_sweep/([^/]+)/chunk_mb:(\d+)/buffers:(\d+)$")
    cells, buffers = {}, set()
    for name, b in run.family("stream_sweep/").items():
        m = pat.match(name)
        if m:
            cells[(int(m.group(2)), int(m.group(3)))] = center(b, "h2d_gb_per_s")
            buffers.add(int(m.group(3)))
    if not cells:
        return []
    cols = sorted(buffers)
    lines = [f"## The chunk policy's sweep ({os.path.basename(run.path)})", "",
             "GB/s of one streamed query (`fused`, no memory limit) by chunk size and slot count.", "",
             "| chunk MiB | " + " | ".join(f"{c} slots" for c in cols) + " |", "|---:|" + "---:|" * len(cols)]
    for mb in sorted({k[0] for k in cells}):
        lines.append(f"| {mb} | " + " | ".join(fmt(cells.get((mb, c)), 2) for c in cols) + " |")
    return lines + [""]


def sharding(runs):
    """Every shard/ row of every run; speed-up against the same fixture at gpus:1 (any run), else
    against the resident batch/ or pipeline/ fixture of its own run."""
    pat = re.compile(r"^shard/([^/]+)/((?:rows:\d+/)?)gpus:(\d+)/batch:(\d+)$")
    rows, g1 = [], {}
    for run in runs:
        for name, b in run.family("shard/").items():
            m = pat.match(name)
            if m:
                key = (m.group(1), m.group(2), int(m.group(4)))
                rows.append((key, int(m.group(3)), name, b, run))
                if int(m.group(3)) == 1:
                    g1[key] = center(b, "real_time")
    if not rows:
        return []
    lines = ["## Sharded", "",
             "Speed-up = the same fixture at G = 1 / at G; efficiency = speed-up / G. Rows without a G = 1 run "
             "compare with the resident search of their own run (`batch/…`, `pipeline/…`): at G = 1 that is the "
             "sharded path's own cost (all-gather and merge).", "",
             "| fixture | file | ms | exchange ms | G = 1 ms | speed-up | efficiency |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for key, g, name, b, run in sorted(rows, key=lambda r: (r[0], r[1])):
        pipe, _, batch = key
        ms = center(b, "real_time")
        ref = g1.get(key) if g > 1 else None
        if ref is None:
            one = (run.get(f"pipeline/{pipe}") if not pipe.startswith("batch")
                   else run.get(f"batch/{pipe}/batch:{batch}"))
            ref = center(one, "real_time")
        speed = ref / ms if ref and ms else None
        lines.append(f"| {name} | {os.path.basename(run.path)} | {fmt(ms, 3)} | {fmt(center(b, 'exchange_ms'), 3)} | "
                     f"{fmt(ref, 3)} | {fmt(speed, 2)} | {fmt(speed / g if speed else None, 3)} |")
    return lines + [""]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    try:
        runs = [load(p) for p in a.json]
    except BenchError as e:
        print(f"scale_report: error: {e}", file=sys.stderr)
        return 1
    lines = ["# Beyond one GPU's memory and beyond one GPU", ""]
    for r in runs:
        lines.append(f"- {os.path.basename(r.path)}: {describe_context(r.context)}")
    lines.append("")
    with_floor = [r for r in runs if r.get("floor/h2d_pinned") is not None]
    for r in runs:
        floor_run = r if r.get("floor/h2d_pinned") is not None else (with_floor[0] if with_floor else None)
        lines += streaming(r, floor_run) + sweep(r)
    lines += sharding(runs)
    for r in runs:
        for n, e in r.errors().items():
            lines.append(f"- failed: {n}: {e}")
    if len(lines) <= 2 + len(runs) + 1:
        print("scale_report: error: no stream/, stream_sweep/ or shard/ fixtures in the input", file=sys.stderr)
        return 1
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "scale.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
