"""The study's tables and plots from a distancies-bench JSON file, beside the study's figures.

    python -m scripts.reports.report RESULTS.json [--out-dir DIR] [--md FILE]

Writes Markdown (default DIR/report.md; DIR defaults to RESULTS-report/ beside the JSON) and
PNG plots in DIR. Values are medians where Google Benchmark wrote aggregates, else means of the
repetitions; "±" is the standard deviation over repetitions. Exit 2 on unusable input.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

from scripts.lib.bench_json import Bench, BenchError, Run, describe_context, load
from scripts.lib.plot_style import distinct_colours, stamp

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "study_reference.json")
STUDY_ORDER = ["CPU", "V1", "V2", "V3", "V4"]
STAGE_TITLES = {"dot_ms": "DotProduct", "first_merge_ms": "FirstMerge",
                "botched_merge_sort_ms": "BotchedMergeSort", "cub_radix_sort_ms": "CubRadixSort"}
SUMS = ["kernel_ms", "transfer_ms", "overhead_ms", "staged_total_ms", "total_ms", "wall_ms"]
RATES = ["distances_per_ms", "gb_per_s", "floor_ratio"]
DASH = "—"


def num(v) -> str:
    """Fixed formatting for every number in the report."""
    if v is None:
        return DASH
    a = abs(float(f"{v:.9g}"))   # no 0.99999999 -> "1" surprises
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 1 or a == 0:
        return f"{v:.2f}"
    return f"{v:.3f}" if a >= 0.01 else f"{v:.3g}"


def ref_num(v) -> str:
    """A study figure exactly as the study gives it."""
    return DASH if v is None else str(v)


def cell(b: Bench | None, metric: str, spread: bool = True) -> str:
    if b is None or not b.has(metric):
        return DASH
    sd = b.spread(metric) if spread else None
    return num(b.center(metric)) + (f" ± {num(sd)}" if sd else "")


def table(header: list, rows: list) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def study_first(names: list) -> list:
    """The study's CPU, V1..V4 first (those present), then the rest in file order."""
    return [n for n in STUDY_ORDER if n in names] + [n for n in names if n not in STUDY_ORDER]


def is_transfer(counter: str) -> bool:
    return counter.endswith(("h2d_ms", "d2h_ms"))


def stage_columns(pipes: dict) -> tuple:
    """(kernel stage counters, transfer stage counters) found in the pipelines, in a stable order."""
    seen: dict = {}
    for b in pipes.values():
        for m in b.metrics():
            if m.endswith("_ms") and "_per_" not in m and m not in SUMS:
                seen[m] = None
    known = [m for m in STAGE_TITLES if m in seen]
    kernel = known + [m for m in seen if m not in known and not is_transfer(m)]
    return kernel, [m for m in seen if is_transfer(m)]


def stage_title(m: str) -> str:
    return STAGE_TITLES.get(m, m.removesuffix("_ms"))


def save(plt, fig, out_dir: str, name: str, context: dict | None = None, extra: str = "") -> None:
    """Writes one figure as a PNG, stamped with the run's GPU, commit and date, and frees it."""
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    if context is not None:
        stamp(fig, context, extra)
    fig.savefig(os.path.join(out_dir, name), dpi=110)
    plt.close(fig)


def total_metric(b: Bench) -> str:
    return "total_ms" if b.has("total_ms") else "real_time"


class Report:
    def __init__(self, run: Run, ref: dict):
        self.run, self.ref = run, ref
        self.caption = f"_{describe_context(run.context, short=True)}_"
        fam = run.family("pipeline/")
        # pipeline/<name> runs the default k (10); pipeline/<name>/k:<k> is the k axis.
        self.pipes = {n[len("pipeline/"):]: b for n, b in fam.items() if "/k:" not in n}
        self.pipes_k = {n[len("pipeline/"):]: b for n, b in fam.items() if "/k:" in n}
        self.rows = run.ctx_float("model_rows")

    # -- Table 1 ------------------------------------------------------------------------
    def table1(self) -> str:
        seqs = {n[len("sequence/"):]: b for n, b in self.run.family("sequence/").items()}
        title = "## Table 1: the study's query sequence, ms per query\n\n"
        if not seqs:
            return title + "> Not reproduced: this JSON has no `sequence/*` benchmarks (they need the " \
                           "host copy of the model and a --benchmark_filter that keeps them).\n"
        queries: dict = {}
        for b in seqs.values():
            for m in b.metrics():
                hit = re.fullmatch(r"q(\d+)_(.+)_ms", m)
                if hit:
                    queries[m] = (int(hit.group(1)), hit.group(2))
        order = sorted(queries, key=lambda m: queries[m][0])
        versions = study_first(list(seqs))
        ranges = self.ref["table1"]["range_ms"]

        def study(v):
            if v not in ranges:
                return DASH
            lo, hi = ranges[v]
            return ref_num(lo) if lo == hi else f"{ref_num(lo)}–{ref_num(hi)}"
        header = ["#", "query"] + [f"{v} {side}" for v in versions for side in ("ours", "study")]
        rows = [[queries[m][0], queries[m][1]] + [x for v in versions for x in (cell(seqs[v], m), study(v))]
                for m in order]
        rows.append(["", "**total**"] + [x for v in versions for x in (cell(seqs[v], "total_ms"), DASH)])
        return (title + self.caption + "\n\n" + table(header, rows) +
                f"\n\nStudy: the range of each version over its sequence ({self.ref['hardware']}).\n")

    # -- Table 2 ------------------------------------------------------------------------
    def totals(self) -> dict:
        """version -> (median total ms, stddev, Bench) for the CPU and every pipeline."""
        out = {}
        cpu = self.run.get("cpu/sequential")
        if cpu is not None:
            out["CPU"] = cpu
        for v in study_first(list(self.pipes)):
            out[v] = self.pipes[v]
        return out

    def distances(self, b: Bench):
        total = b.center(total_metric(b))
        if self.rows and total:
            return self.rows / total
        return b.center("distances_per_ms")

    def table2(self) -> str:
        title = "## Table 2: total per query, speedups, distances per ms\n\n"
        tot = self.totals()
        if not tot:
            return title + "> Not reproduced: no `cpu/sequential` or `pipeline/*` benchmarks in this JSON.\n"
        ref = self.ref["table2"]
        cpu = tot["CPU"].center(total_metric(tot["CPU"])) if "CPU" in tot else None
        rows = []
        for v in study_first(list(dict.fromkeys(list(tot) + STUDY_ORDER))):
            b, r = tot.get(v), ref.get(v, {})
            t = b.center(total_metric(b)) if b else None
            prev = STUDY_ORDER[STUDY_ORDER.index(v) - 1] if v in STUDY_ORDER[1:] else None
            pb = tot.get(prev) if prev else None
            pt = pb.center(total_metric(pb)) if pb else None
            sd = f" ± {ref_num(r['stddev_ms'])}" if r.get("stddev_ms") else ""
            rows.append([
                v, cell(b, total_metric(b)) if b else DASH, ref_num(r.get("total_ms")) + sd if r else DASH,
                f"{cpu / t:.2f}" if cpu and t else DASH, f"{r['speedup_vs_cpu']:.2f}" if r else DASH,
                (f"{pt / t:.2f}" if pt and t else DASH) if v != "CPU" else ("1.00" if t else DASH),
                f"{r['speedup_vs_previous']:.2f}" if r else DASH,
                num(self.distances(b)) if b else DASH, ref_num(r.get("distances_per_ms"))])
        header = ["version", "total ms ours", "total ms study", "× CPU ours", "× CPU study",
                  "× previous ours", "× previous study", "distances/ms ours", "distances/ms study"]
        note = "" if cpu else "\n\n> No `cpu/sequential` in this JSON: speedups over the CPU not computed."
        return (title + self.caption + "\n\n" + table(header, rows) + note +
                f"\n\nOurs: CPU = `cpu/sequential`, Vn = `pipeline/Vn`; distances/ms = model rows / total ms. "
                f"Study: {self.ref['method']} on {self.ref['hardware']}.\n")

    # -- Table 3 ------------------------------------------------------------------------
    def table3(self) -> str:
        title = "## Table 3: where the time goes, ms per query\n\n"
        if not self.pipes:
            return title + "> Not reproduced: no `pipeline/*` benchmarks in this JSON.\n"
        kernel, _ = stage_columns(self.pipes)
        ref = self.ref["table3"]
        rows = []
        for v in study_first(list(dict.fromkeys(list(self.pipes) + STUDY_ORDER[1:]))):
            b = self.pipes.get(v)
            if b is not None:
                both = None
                if b.has("transfer_ms") and b.has("overhead_ms"):
                    both = b.center("transfer_ms") + b.center("overhead_ms")
                # The breakdown's own total (staged_total_ms, the same search with an event pair
                # around each stage) is what its columns add up to; total_ms is the search
                # without those events, the time reported everywhere else.
                staged = "staged_total_ms" if b.has("staged_total_ms") else "total_ms"
                rows.append([f"{v} ours"] + [cell(b, m) for m in kernel] +
                            [cell(b, "transfer_ms"), cell(b, "overhead_ms"), num(both), cell(b, staged),
                             cell(b, "total_ms")])
            if v in ref:
                r = ref[v]
                rows.append([f"{v} study"] + [ref_num(r.get(m)) for m in kernel] +
                            [DASH, DASH, ref_num(r["overhead_ms"]), ref_num(r["total_ms"]), DASH])
        header = ["version"] + [stage_title(m) for m in kernel] + \
                 ["transfers", "overhead", "transfers + overhead", "total", "total without stage events"]
        notes = [f"{v}: {r['note']}" for v, r in ref.items() if isinstance(r, dict) and "note" in r]
        return (title + self.caption + "\n\n" + table(header, rows) + "\n\nOverhead = total − kernels − "
                "transfers (allocation, synchronisation, launch gaps), all from the search timed stage by stage; "
                "the last column is the same search timed only from its first to its last event (what every other "
                "table reports; docs/methodology.md). The study reports one overhead "
                "that includes the copies, hence the \"transfers + overhead\" column. Study notes: " +
                "; ".join(notes) + ".\n")

    # -- every variant ------------------------------------------------------------------
    def dot_table(self) -> str:
        title = "## Dot-product variants against the memory floor\n\n"
        dots = self.run.family("dot/")
        floor = self.run.get("floor/read_model")
        if not dots and floor is None:
            return title + "> No `floor/*` or `dot/*` benchmarks in this JSON.\n"
        entries = ([("floor/read_model", floor)] if floor is not None else []) + list(dots.items())
        rows = [[f"`{n}`", cell(b, "kernel_ms" if b.has("kernel_ms") else "real_time"), cell(b, "gb_per_s"),
                 cell(b, "floor_ratio", False), cell(b, "distances_per_ms", False)] for n, b in entries]
        floor_line = ""
        if self.run.ctx_float("floor_ms"):
            floor_line = (f"\n\nFloor (reading the model once): {num(self.run.ctx_float('floor_ms'))} ms, "
                          f"{num(self.run.ctx_float('floor_gb_per_s'))} GB/s; floor ratio = kernel ms / floor ms.")
        return (title + self.caption + "\n\n" +
                table(["benchmark", "kernel ms", "GB/s", "floor ratio", "distances/ms"], rows) + floor_line + "\n")

    def topk_table(self) -> str:
        title = "## Top-k stages by k, kernel ms\n\n"
        found = self.run.family("topk/")
        if not found:
            return title + "> No `topk/*` benchmarks in this JSON.\n"
        grid: dict = {}
        ks: set = set()
        for n, b in found.items():
            hit = re.fullmatch(r"topk/(.+)/k:(\d+)", n)
            stage, k = (hit.group(1), int(hit.group(2))) if hit else (n[len("topk/"):], None)
            grid.setdefault(stage, {})[k] = b
            ks.add(k)
        cols = sorted(k for k in ks if k is not None) + ([None] if None in ks else [])
        rows = [[f"`{s}`"] + [cell(by_k.get(k), "kernel_ms" if by_k.get(k) and by_k[k].has("kernel_ms")
                                    else "real_time") for k in cols] for s, by_k in grid.items()]
        return title + self.caption + "\n\n" + table(["stage"] + [f"k={k}" if k else "k=?" for k in cols],
                                                     rows) + "\n"

    def pipeline_table(self) -> str:
        title = "## Every pipeline, ms per query\n\n"
        if not self.pipes:
            return title + "> No `pipeline/*` benchmarks in this JSON.\n"
        kernel, transfer = stage_columns(self.pipes)
        def present(ms):
            return [m for m in ms if any(b.has(m) for b in self.pipes.values())]
        cols = kernel + transfer + present(SUMS) + present(RATES)
        rows = [[f"`{v}`", self.pipes[v].repetitions()] +
                [cell(self.pipes[v], m, m == "total_ms") for m in cols] for v in study_first(list(self.pipes))]
        return (title + self.caption + "\n\n" +
                table(["pipeline", "reps"] + [stage_title(m) if m in kernel + transfer else m for m in cols],
                      rows) + "\n")

    def peer_table(self, peers: Run | None) -> str:
        """Peers (scripts/peers/peer_torch.py) beside our pipelines: peer time / our time."""
        if peers is None:
            return ""
        title = "## Peers in the same run, ms per query\n\n"
        found = {n[len("peer/"):]: b for n, b in peers.family("peer/").items() if "/batch:" not in n}
        if not found:
            return ""
        ours = [v for v in study_first(list(self.pipes)) if v in ("V4", "fused", "fused_f16", "fused_bf16")]
        rows = []
        for name, b in found.items():
            exact = b.center("exact") if b.has("exact") else None
            row = [f"`{name}`", cell(b, total_metric(b)), num(b.center("distances_per_ms")),
                   "yes" if exact == 1 else "no" if exact == 0 else "?"]
            for v in ours:
                mine = self.pipes[v].center(total_metric(self.pipes[v]))
                row.append(f"{b.center(total_metric(b)) / mine:.2f}×" if mine else "—")
            rows.append(row)
        note = (f"\n\nPeer: {peers.context.get('peer', '?')} on {peers.context.get('gpu', '?')}; "
                "exact = its top k has the fp64 oracle's rows. A ratio > 1 means our pipeline is that many "
                "times faster than the peer.\n")
        return (title + self.caption + "\n\n" +
                table(["peer", "total ms", "distances/ms", "exact"] + [f"peer ÷ `{v}`" for v in ours], rows) + note)

    def batch_table(self, peers: Run | None) -> str:
        """Batched pipelines and batch peers by batch size: ms per batch, and peer time / ours."""
        ours: dict = {}
        for n, b in self.run.family("batch/").items():
            name, _, size = n[len("batch/"):].partition("/batch:")
            ours.setdefault(name, {})[int(size)] = b
        if not ours:
            return ""
        theirs: dict = {}
        if peers is not None:
            for n, b in peers.family("peer/").items():
                name, _, size = n[len("peer/"):].partition("/batch:")
                if size:
                    theirs.setdefault(name, {})[int(size)] = b
        sizes = sorted({s for d in (*ours.values(), *theirs.values()) for s in d})
        title = "## Batched search, ms per batch\n\n"
        header = ["pipeline"] + [f"B = {s}" for s in sizes]
        rows = [[f"`{n}`"] + [cell(d.get(s), total_metric(d[s])) if s in d else DASH for s in sizes]
                for n, d in list(ours.items()) + list(theirs.items())]
        out = title + self.caption + "\n\n" + table(header, rows)

        def best(s):  # our fastest pipeline at batch size s (all exact)
            c = [(d[s].center(total_metric(d[s])), n) for n, d in ours.items() if s in d]
            return min(c) if c else None
        rows = [["best of ours"] + [f"{best(s)[0]:.2f} ms `{best(s)[1]}`" if best(s) else DASH for s in sizes],
                ["distances/ms"] + [num(s * self.rows / best(s)[0]) if best(s) and self.rows else DASH
                                    for s in sizes]]
        for n, d in theirs.items():
            rows.append([f"`{n}` ÷ best"] + [f"{d[s].center(total_metric(d[s])) / best(s)[0]:.1f}×"
                                               if s in d and best(s) else DASH for s in sizes])
        out += "\n\n" + table(["", *[f"B = {s}" for s in sizes]], rows)
        if theirs:
            exact = {n: min(d[s].center("exact_fraction") for s in d if d[s].has("exact_fraction"))
                     for n, d in theirs.items() if any(d[s].has("exact_fraction") for s in d)}
            out += ("\n\nOurs are exact (every query certified or redone; `fallbacks` counter). Peers' smallest "
                    "share of checked queries with the fp64 oracle's top-k rows: " +
                    ", ".join(f"`{n}` {v:.3f}" for n, v in exact.items()) +
                    ". A ratio > 1 means ours is that many times faster.\n")
        return out

    def errors(self) -> str:
        errs = self.run.errors()
        if not errs:
            return ""
        return "## Benchmarks that did not run\n\n" + "\n".join(f"- `{n}`: {e}" for n, e in errs.items()) + "\n"

    def throttled(self) -> str:
        hot = self.run.throttled()
        if not hot:
            return ""
        return ("## Throttled fixtures\n\nSamples under 90 % of the maximum SM clock or under a power or thermal "
                "clock-event reason (docs/methodology.md); these figures were taken at reduced clocks.\n\n"
                + "\n".join(f"- `{n}`: {t} throttled sample(s)" for n, t in hot.items()) + "\n")

    # -- plots --------------------------------------------------------------------------
    def plots(self, out_dir: str) -> dict:
        """Writes the PNGs it has data for; returns {file name: None or the reason it was skipped}."""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        done = {}

        # Breakdown per version, ours beside the study: each stage its own bar, side by side (a
        # log axis is needed for V1's model copy, and stacked bars on a log axis misstate areas).
        name = "breakdown.png"
        if self.pipes:
            kernel, _ = stage_columns(self.pipes)
            segs = kernel + ["transfer_ms", "overhead_ms"]
            colors = dict(zip(segs, distinct_colours(len(segs)), strict=True))
            vs = study_first(list(self.pipes))
            fig, axes = plt.subplots(1, 2, figsize=(max(11, 0.9 * len(vs) * 2), 4.8))
            ours = {v: {m: self.pipes[v].center(m) or 0.0 for m in segs} for v in vs}
            ref = {v: self.ref["table3"][v] for v in STUDY_ORDER[1:]}
            for ax, data, label in ((axes[0], ours, "ours: " + self.run.context.get("gpu", "?")),
                                    (axes[1], ref, "study: " + self.ref["hardware"])):
                shown = [m for m in segs if any((data[v].get(m) or 0) > 0 for v in data)]
                width = 0.8 / max(1, len(shown))
                for j, m in enumerate(shown):
                    xs = [i - 0.4 + width * (j + 0.5) for i in range(len(data))]
                    ax.bar(xs, [data[v].get(m) or 0.0 for v in data], width, color=colors[m],
                           label=stage_title(m) if m in kernel else m[:-3].replace("_", " "))
                ax.set_xticks(range(len(data)), list(data))
                ax.set_title(f"{label}: ms per query by stage (log scale)", fontsize=9)
                ax.set_ylabel("ms")
                ax.set_yscale("log")  # V1's model copy would flatten every other bar
                ax.tick_params(axis="x", rotation=30)
                ax.legend(fontsize=7)
            save(plt, fig, out_dir, name, self.run.context, "study: " + self.ref["hardware"])
            done[name] = None
        else:
            done[name] = "no pipeline/* benchmarks"

        # Every dot variant's kernel time against the floor.
        name = "dot_vs_floor.png"
        dots = self.run.family("dot/")
        if dots:
            def metric(b):
                return "kernel_ms" if b.has("kernel_ms") else "real_time"
            fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(dots)), 4.5))
            labels = [n[len("dot/"):] for n in dots]
            ax.bar(labels, [b.center(metric(b)) for b in dots.values()],
                   yerr=[b.spread(metric(b)) or 0 for b in dots.values()], color="tab:blue", capsize=3)
            floor = self.run.ctx_float("floor_ms")
            fb = self.run.get("floor/read_model")
            if floor is None and fb is not None:
                floor = fb.center(metric(fb))
            if floor:
                ax.axhline(floor, color="tab:red", linestyle="--", label=f"floor {num(floor)} ms")
                ax.legend()
            ax.set_ylabel("kernel ms")
            ax.set_title("dot variants vs the memory floor: " + self.run.context.get("gpu", "?"), fontsize=9)
            ax.tick_params(axis="x", rotation=30)
            save(plt, fig, out_dir, name, self.run.context)
            done[name] = None
        else:
            done[name] = "no dot/* benchmarks"

        # Distances per ms across versions, log scale, ours vs the study.
        name = "distances_per_ms.png"
        tot = self.totals()
        if tot:
            vs = study_first(list(dict.fromkeys(STUDY_ORDER + list(tot))))
            ours = [self.distances(tot[v]) if v in tot else None for v in vs]
            study = [self.ref["table2"].get(v, {}).get("distances_per_ms") for v in vs]
            x = range(len(vs))
            fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(vs)), 4.5))
            ax.bar([i - 0.2 for i in x], [v or 0 for v in ours], 0.4, label="ours", color="tab:green")
            ax.bar([i + 0.2 for i in x], [v or 0 for v in study], 0.4, label="study", color="tab:gray")
            ax.set_xticks(list(x), vs)
            ax.set_yscale("log")
            ax.set_ylabel("distances per ms (log)")
            ax.set_title("distances per ms: " + self.run.context.get("gpu", "?") + " vs the study (" +
                         self.ref["hardware"] + ")", fontsize=9)
            ax.legend()
            save(plt, fig, out_dir, name, self.run.context, "study: " + self.ref["hardware"])
            done[name] = None
        else:
            done[name] = "no cpu/sequential or pipeline/* benchmarks"
        return done

    def markdown(self, plots: dict, rel: str, peers: Run | None = None) -> str:
        reps = max((b.repetitions() for b in self.run.benches.values()), default=0)
        head = (f"# DISTÀNCIES reproduction report\n\nSource: `{self.run.path}`\n\n"
                f"_{describe_context(self.run.context)}_\n\n"
                f"Ours: medians where Google Benchmark wrote aggregates, else means; ± is the standard "
                f"deviation over repetitions (up to {reps} here). Study: {self.ref['study']}; "
                f"{self.ref['method']}; {self.ref['hardware']}.\n")
        figs = ["## Plots\n"] + [f"![{n}]({os.path.join(rel, n) if rel else n})" if why is None
                                 else f"> `{n}` not drawn: {why}." for n, why in plots.items()]
        parts = [head, self.table1(), self.table2(), self.table3(), self.dot_table(), self.topk_table(),
                 self.pipeline_table(), self.peer_table(peers), self.batch_table(peers), self.throttled(),
                 self.errors(), "\n\n".join(figs) + "\n"]
        return "\n".join(p for p in parts if p)


def merge_runs(runs: list) -> Run:
    """Several peer files as one: their benchmarks together, the first file's context."""
    benches: dict = {}
    for r in runs:
        benches.update(r.benches)
    first = runs[0]
    return Run(path=", ".join(r.path for r in runs), context=first.context, benches=benches)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="?",
                    help="distancies-bench --benchmark_out JSON (default: the canonical embeddings run of "
                         "results/manifest.json for --gpu)")
    ap.add_argument("--gpu", default="h100", help="the GPU whose canonical run is the default input")
    ap.add_argument("--out-dir", help="where the PNGs (and by default report.md) go")
    ap.add_argument("--md", help="Markdown file to write (default OUT_DIR/report.md)")
    ap.add_argument("--peers", action="append", default=[],
                    help="peer JSON (scripts/peers/peer_torch.py, peer_torch_batch.py, peer_faiss.py); repeatable")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if a.results is None:
        from scripts.lib import manifest
        try:
            a.results = str(manifest.canonical("embeddings", a.gpu))
        except (OSError, ValueError, manifest.ManifestError) as e:
            print(f"error: no input and no canonical run: {e}", file=sys.stderr)
            return 2
    try:
        run = load(a.results)
        peers = merge_runs([load(p) for p in a.peers]) if a.peers else None
        with open(REFERENCE, encoding="utf-8") as f:
            ref = json.load(f)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out_dir = a.out_dir or os.path.splitext(a.results)[0] + "-report"
    md = a.md or os.path.join(out_dir, "report.md")
    os.makedirs(out_dir, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(md)), exist_ok=True)
    rep = Report(run, ref)
    plots = rep.plots(out_dir)
    rel = os.path.relpath(os.path.abspath(out_dir), os.path.dirname(os.path.abspath(md)))
    with open(md, "w", encoding="utf-8") as f:
        f.write(rep.markdown(plots, "" if rel == "." else rel, peers))
    print(f"wrote {md}")
    for n, why in plots.items():
        print(f"wrote {os.path.join(out_dir, n)}" if why is None else f"skipped {n}: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
