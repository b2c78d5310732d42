"""Renders the figure tables of README.md, docs/*.md and results/README.md from the committed JSON.

A generated block in a Markdown file:

    <!-- generated: scripts/docs/render_docs.py TABLE_ID from results/<a>.json results/<b>.json -->
    | ... the table ... |
    <!-- end generated -->

TABLE_ID names a renderer below; the header's file list is the renderer's inputs (rewritten by
--write, compared by --check). Numbers go into the docs only this way: no figure is typed by hand.

    python3 -m scripts.docs.render_docs --write     # rewrite every block
    python3 -m scripts.docs.render_docs --check     # exit 1 naming each block that differs from the JSON
    python3 -m scripts.docs.render_docs --list      # the table ids and where they are used
"""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import statistics
import sys
from pathlib import Path

from scripts.docs import goals
from scripts.lib import bench_json, manifest

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"<!-- generated: scripts/docs/render_docs\.py (?P<id>\S+) from (?P<src>[^>]*?) -->\n"
                   r"(?P<body>.*?)<!-- end generated -->", re.DOTALL)
REGISTRY_TXT = "results/registry/list.txt"     # `distancies list` of the tree the docs describe
REGISTRY_JSON = "results/registry/list.json"   # `distancies list --json`
DOC_GLOBS = ("README.md", "docs/*.md", "results/README.md", "scripts/README.md")


def ms(v, digits=3) -> str:
    return "—" if v is None else f"{v:,.{digits}f}"


def thousands(n) -> str:
    return f"{int(n):,}"


class Ctx:
    """Loads each JSON once; paths are relative to the repository root."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.runs: dict = {}
        self.doc = manifest.load(self.root)

    def src(self, rel: str) -> str:
        """rel, or rel.gz where the file is stored gzip-compressed: the name a block cites."""
        found = bench_json.resolve(self.root / rel)
        return rel + bench_json.GZ if found.endswith(bench_json.GZ) and not rel.endswith(bench_json.GZ) else rel

    def srcs_in(self, folder: str, pattern: str) -> list:
        """The result files under results/<folder> matching `pattern`, sorted, as blocks cite them."""
        base = self.root / "results" / folder
        return sorted(self.src(p.relative_to(self.root).as_posix().removesuffix(bench_json.GZ))
                      for p in base.glob(pattern))

    def json(self, rel: str):
        """A result file's JSON (plain or gzip)."""
        return bench_json.read_json(self.root / rel)

    def run(self, rel: str) -> bench_json.Run:
        if rel not in self.runs:
            self.runs[rel] = bench_json.load(str(self.root / rel))
        return self.runs[rel]

    def canonical(self, study: str, gpu: str) -> str:
        return manifest.canonical(study, gpu, self.root, self.doc).relative_to(self.root).as_posix()

    def parts(self, study: str, gpu: str) -> list:
        return [p.relative_to(self.root).as_posix() for p in manifest.parts(study, gpu, self.root, self.doc)]

    def median(self, rels, name: str, counter: str = "real_time"):
        """The median of a fixture from the first file (of rels, later files win) that has it."""
        for rel in reversed(list(rels)):
            b = self.run(rel).get(name)
            if b is not None and b.has(counter):
                return b.center(counter)
        return None


# -- renderers: each returns (inputs, Markdown) --------------------------------------------------

def r_results_files(c: Ctx):
    rows = ["| file | study | GPU | role | commit | command |", "|---|---|---|---|---|---|"]
    for path, e in sorted(c.doc["files"].items(), key=lambda kv: (kv[1]["study"], kv[1]["gpu"], kv[0])):
        cmd = e.get("command", "")
        cmd = f"`{cmd.replace('|', '&#124;')}`" if cmd else ""
        rows.append(f"| `{path[len('results/'):]}` | {e['study']} | {e['gpu']} | {e['role']} | "
                    f"{e.get('commit', '—')} | {cmd} |")
    return ["results/manifest.json"], "\n".join(rows)


def r_goals(c: Ctx, study: str | None = None):
    defs = goals.load_goals(c.root, study)
    res = [goals.evaluate(g, c.root) for g in defs]
    evs = [g.get("evidence") or {} for g in defs]
    src = sorted({r for ev in evs for f in goals.evidence_specs(ev) for r in map(c.src, goals.resolve(c.root, f))})
    return [f"results/goals/{study or '*'}.json"] + src, goals.markdown(res)


def r_batch_tiles(c: Ctx):
    src = c.canonical("embeddings", "h100")
    tiles = (16384, 32768, 65536, 131072, 262144)
    rows = ["| pipeline | " + " | ".join(f"T = {thousands(t)}" for t in tiles) + " |",
            "|---|" + "---:|" * len(tiles)]
    for p in ("batch_tf32", "batch_bf16", "batch_f16_h"):
        cells = [ms(c.median([src], f"batch_tile/{p}/batch:1024/tile:{t}"), 2) for t in tiles]
        rows.append(f"| `{p}` | " + " | ".join(cells) + " |")
    return [src], "\n".join(rows)


def r_batch_figures(c: Ctx):
    src = c.canonical("embeddings", "h100")
    rows = [("| pipeline (B = 1,024) | total ms | scan | re-rank | prepare | transfers | GEMM tiles alone | "
             "their TFLOP/s |"), "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for p in ("batch_f16_h", "batch_f16", "batch_bf16", "batch_tf32", "batch_sgemm"):
        n, g = f"batch/{p}/batch:1024", f"batch_gemm/{p}/batch:1024"
        cells = [ms(c.median([src], n, k)) for k in ("real_time", "scan_ms", "rerank_ms", "prepare_ms",
                                                      "transfer_ms")]
        tf = c.median([src], g, "tflops")
        rows.append(f"| `{p}` | " + " | ".join(cells) + f" | {ms(c.median([src], g))} | "
                    f"{'—' if tf is None else f'{tf:.0f}'} |")
    return [src], "\n".join(rows)


def _batch_sizes(c: Ctx, srcs, pipeline: str) -> list:
    rx = re.compile(rf"^batch/{re.escape(pipeline)}/batch:(\d+)$")
    sizes = set()
    for s in srcs:
        sizes |= {int(m[1]) for n in c.run(s).benches if (m := rx.match(n))}
    return sorted(sizes)


def r_batch_fused(c: Ctx):
    srcs = c.parts("batch", "h100")
    rows = ["| B | `batch_f16_fused` | scan | re-rank | `batch_f16_h` | `batch_fused_loop` | best other |",
            "|---:|---:|---:|---:|---:|---:|---|"]
    for b in _batch_sizes(c, srcs, "batch_f16_fused"):
        def med(p, k="real_time", b=b):
            return c.median(srcs, f"batch/{p}/batch:{b}", k)
        others = {}
        for s in srcs:
            for n, bench in c.run(s).benches.items():
                m = re.match(rf"^batch/([^/]+)/batch:{b}$", n)
                if m and m[1] != "batch_f16_fused" and bench.error is None:
                    others[m[1]] = bench.center("real_time")
        best = min(others.items(), key=lambda kv: kv[1]) if others else None
        rows.append(f"| {thousands(b)} | {ms(med('batch_f16_fused'))} | {ms(med('batch_f16_fused', 'scan_ms'))} | "
                    f"{ms(med('batch_f16_fused', 'rerank_ms'))} | {ms(med('batch_f16_h'))} | "
                    f"{ms(med('batch_fused_loop'))} | "
                    + (f"`{best[0]}` {ms(best[1])}" if best else "—") + " |")
    return srcs, "\n".join(rows)


def _goal_by_batch(c: Ctx) -> dict:
    """B -> the filtered scans' own goal (issue #15's; issue 39's INT8-ceiling goals are not theirs)."""
    out = {}
    for g in goals.load_goals(c.root, "batch"):
        if g["id"].startswith("batch.int8_ceiling"):
            continue
        m = re.search(r"batch:(\d+)\$", (g.get("evidence") or {}).get("fixture", ""))
        if m and g["comparison"] == "<=" and g.get("unit") == "ms":
            b = int(m[1])
            out[b] = min(out.get(b, g["threshold"]), g["threshold"])
    return out


def r_batch_filter(c: Ctx):
    srcs = c.parts("batch", "h100")
    goal = _goal_by_batch(c)
    rows = ["| B | `batch_f16_filter` | `batch_f16_h` | `batch_f16_fused` | goal (ms) |",
            "|---:|---:|---:|---:|---:|"]
    for b in _batch_sizes(c, srcs, "batch_f16_filter"):
        cells = [ms(c.median(srcs, f"batch/{p}/batch:{b}")) for p in
                 ("batch_f16_filter", "batch_f16_h", "batch_f16_fused")]
        rows.append(f"| {thousands(b)} | " + " | ".join(cells)
                    + f" | {'≤ ' + format(goal[b], 'g') if b in goal else ''} |")
    return srcs + ["results/goals/batch.json"], "\n".join(rows)


def r_batch_i8(c: Ctx):
    srcs = c.parts("batch", "h100")
    rows = ["| B | `batch_i8_filter` | `batch_f16_filter` | `batch_f16_h` | f16 filter / i8 filter | fallbacks |",
            "|---:|---:|---:|---:|---:|---:|"]
    for b in _batch_sizes(c, srcs, "batch_i8_filter"):
        i8, f16, h = (c.median(srcs, f"batch/{p}/batch:{b}") for p in
                      ("batch_i8_filter", "batch_f16_filter", "batch_f16_h"))
        fb = c.median(srcs, f"batch/batch_i8_filter/batch:{b}", "fallbacks")
        rows.append(f"| {thousands(b)} | {ms(i8)} | {ms(f16)} | {ms(h)} | "
                    f"{ms(f16 / i8, 2) if i8 and f16 else '—'} | {'—' if fb is None else f'{fb:g}'} |")
    return srcs, "\n".join(rows)


def r_batch_roofline(c: Ctx):
    from scripts.reports import batch_roofline
    srcs = c.parts("batch", "h100")
    registry = c.json(REGISTRY_JSON)
    docs = [c.json(s) for s in srcs]
    keep = {1: ("batch_i8_filter", "batch_f16_filter", "batch_fused_loop"),
            16: ("batch_i8_filter", "batch_f16_filter"), 128: ("batch_i8_filter", "batch_f16_filter"),
            1024: ("batch_i8_filter", "batch_f16_filter", "batch_f16_h", "batch_tf32", "batch_sgemm",
                   "batch_f16_fused")}
    rows = ["| B | pipeline | ms | bytes / bandwidth | FLOP / peak | × its roofline |",
            "|---:|---|---:|---:|---:|---:|"]
    for r in batch_roofline.table(registry, docs):
        if r["pipeline"] not in keep.get(r["batch"], ()):
            continue
        flop = "—" if r["flop_ms"] is None else f"{r['flop_ms']:.3f}"
        bound = " (compute)" if r["bound"] == "compute" else ""
        rows.append(f"| {thousands(r['batch'])} | `{r['pipeline']}` | {r['ms']:.3f} | {r['bytes_ms']:.3f} | "
                    f"{flop} | {r['x_floor']:.2f}{bound} |")
    return srcs + [c.src(REGISTRY_JSON)], "\n".join(rows)


def r_variants(c: Ctx):
    from scripts.reports import variants_table
    src = c.canonical("embeddings", "h100")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        variants_table.main(["variants_table.py", str(c.root / src), str(c.root / c.src(REGISTRY_TXT))])
    return [src, c.src(REGISTRY_TXT)], buf.getvalue().rstrip("\n")


def r_study_table(c: Ctx):
    src = c.canonical("embeddings", "h100")
    ref = c.json("scripts/reports/study_reference.json")
    rows_model = c.run(src).ctx_float("model_rows") or ref["rows"]
    study_ms = {v: x.get("total_ms") for v, x in ref.get("table2", {}).items()}
    rows = ["| version | total ms, ours | total ms, study (RTX 2060 SUPER) | distances / ms, ours |",
            "|---|---:|---:|---:|"]
    for label, name in (("CPU (one thread)", "cpu/sequential"), ("V1", "pipeline/V1"), ("V2", "pipeline/V2"),
                        ("V3", "pipeline/V3"), ("V4", "pipeline/V4"),
                        ("`fused` (beyond the study, exact fp32)", "pipeline/fused"),
                        ("`fused_f16` (16-bit scan, certified exact fp32 answer)", "pipeline/fused_f16")):
        t = c.median([src], name)
        key = "CPU" if label.startswith("CPU") else label
        st = study_ms.get(key)
        rows.append(f"| {label} | {ms(t, 3)} | {'—' if st is None else format(st, 'g')} | "
                    f"{'—' if not t else thousands(rows_model / t)} |")
    return [src, "scripts/reports/study_reference.json"], "\n".join(rows)


def r_analogy(c: Ctx):
    srcs = [c.src(s) for s in ("results/analogy/h100-glove6b50d-oracle-check.json",
                               "results/analogy/h100-glove6b50d-oracle-check-i8.json")]
    rows = ["| run | `--variant` | pipeline that ran | device time (ms) | fallbacks | top-1 = fp64 oracle |",
            "|---|---|---|---:|---:|---:|"]
    for s in srcs:
        d = c.json(s)
        q = d.get("queries")
        commit = d.get("context", {}).get("commit", "?")
        for p in d.get("pipelines", []):
            variant = "auto" if p.get("chosen_by") else p["pipeline"]
            rows.append(f"| {commit} | `{variant}` | `{p['pipeline']}` | {ms(p.get('total_ms'), 1)} | "
                        f"{p.get('fallbacks', '—')} | {thousands(p['identical_to_oracle'])} / {thousands(q)} |")
    return srcs, "\n".join(rows)


def r_same_run(c: Ctx, folder: str):
    """Ours and the peers at B = 1,024 from one call (results/batch/<folder>/). The peers' times are
    host clocks around a call from host queries to host results (FAISS: perf_counter; PyTorch: events
    around a call ending in a copy to the host), ours the GPU events from the queries' upload to the
    results' download: the ratio divides by our wall clock (wall_ms), the same kind of time."""
    base = f"results/batch/{folder}"
    srcs = [c.src(f"{base}/h100-{n}.json") for n in ("ours", "peers-faiss", "peers-torch")]
    ours = {n: b for n, b in c.run(srcs[0]).benches.items() if n.startswith("batch/") and b.error is None}
    best_name = min(ours, key=lambda n: ours[n].center("wall_ms"))
    best = ours[best_name].center("wall_ms")
    rows = ["| B = 1,024 | ms (median) | our wall clock ms | × our fastest (wall clocks) |", "|---|---:|---:|---:|"]
    for s in srcs:
        for n, b in c.run(s).benches.items():
            if b.error is None and n.startswith(("batch/", "peer/")):
                t = b.center("real_time")
                wall = b.center("wall_ms") if n.startswith("batch/") else None
                mark = "**" if n == best_name else ""
                rows.append(f"| {mark}`{n}`{mark} | {ms(t)} | {ms(wall) if wall else '—'} | {(wall or t) / best:.1f} |")
    return srcs, "\n".join(rows)


def r_ab(c: Ctx, folder: str):
    """An A/B of two builds alternated in one call (results/<folder>/ab-<family>-<old|new>-<round>.json):
    per family and fixture the median of every sample of each side, their ratio and both ranges."""
    srcs = c.srcs_in(folder, "ab-*.json*")
    samples: dict = {}
    commits: dict = {}
    for s in srcs:
        m = re.match(r".*/ab-(.+)-(old|new)-\d+\.json", s)
        doc = c.json(s)
        commits[m[2]] = doc["context"].get("distancies_commit", "?")
        for b in doc["benchmarks"]:
            if b.get("run_type") == "iteration" and not b.get("error_occurred"):
                name = re.sub(r"/manual_time$", "", b["run_name"])
                samples.setdefault((m[1], name), {"old": [], "new": []})[m[2]].append(b["real_time"])
    rows = [f"| family | fixture | before `{commits.get('old')}` (ms) | after `{commits.get('new')}` (ms) "
            "| after / before | range before | range after |", "|---|---|---:|---:|---:|---|---|"]
    worst = (0.0, "")
    for (fam, name), v in sorted(samples.items()):
        if not v["old"] or not v["new"]:
            continue
        o, n = statistics.median(v["old"]), statistics.median(v["new"])
        worst = max(worst, (n / o, f"`{name}` on `{fam}`"))
        rows.append(f"| `{fam}` | `{name}` | {ms(o, 4)} | {ms(n, 4)} | {n / o:.3f} | "
                    f"{ms(min(v['old']), 4)}–{ms(max(v['old']), 4)} | {ms(min(v['new']), 4)}–{ms(max(v['new']), 4)} |")
    rows.append(f"\nLargest after / before: {worst[0]:.3f} ({worst[1]}).")
    return srcs, "\n".join(rows)


SWITCH_SETTINGS = ("neither", "first-stage", "two-pass", "both")


def r_switch_ab(c: Ctx, folder: str = "families/i8-two-pass"):
    """One build with two changes switched by environment in one call (results/<folder>/ab-<family>-
    <setting>.json, SWITCH_SETTINGS): per family and fixture each setting's median (its rerank_ms
    after the slash) and both / neither."""
    srcs = c.srcs_in(folder, "ab-*.json*")
    cells: dict = {}
    for s in srcs:
        m = re.match(r".*/ab-(.+)-(" + "|".join(SWITCH_SETTINGS) + r")\.json", s)
        for name, b in c.run(s).benches.items():
            if b.error is None:
                cells.setdefault((m[1], name), {})[m[2]] = (b.center("real_time"), b.center("rerank_ms"))
    rows = ["| family | fixture | " + " | ".join(f"{x} ms (re-rank)" for x in SWITCH_SETTINGS) + " | both / neither |",
            "|---|---|" + "---:|" * (len(SWITCH_SETTINGS) + 1)]
    for (fam, name), v in sorted(cells.items()):
        if set(v) != set(SWITCH_SETTINGS):
            continue
        row = " | ".join(f"{ms(v[x][0])} ({ms(v[x][1])})" for x in SWITCH_SETTINGS)
        rows.append(f"| `{fam}` | `{name}` | {row} | {v['both'][0] / v['neither'][0]:.3f} |")
    return srcs, "\n".join(rows)


def r_settings(c: Ctx, folder: str):
    """One build run under several settings of the environment in one call (results/<folder>/set-<n>-
    <setting>-<family>.json, n the column's place): per family and fixture each setting's median ms,
    and after the first its ratio to the first's."""
    srcs = c.srcs_in(folder, "set-*.json*")
    cells: dict = {}
    names: dict = {}
    commits = set()
    for s in srcs:
        m = re.match(r".*/set-(\d+)-([a-z0-9]+)-(.+)\.json", s)
        names[int(m[1])] = m[2]
        run = c.run(s)
        commits.add(run.context.get("distancies_commit", "?"))
        for name, b in run.benches.items():
            if b.error is None:
                cells.setdefault((m[3], name), {})[int(m[1])] = b.center("real_time")
    order = sorted(names)
    rows = [f"One build (`{'`, `'.join(sorted(commits))}`), ms (after the first: / the first):", "",
            "| family | fixture | " + " | ".join(f"`{names[n]}`" for n in order) + " |",
            "|---|---|" + "---:|" * len(order)]
    def natural(key):  # batch:16 before batch:128
        return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", "/".join(key[0]))]

    for (fam, name), v in sorted(cells.items(), key=natural):
        first = v.get(order[0])
        row = [ms(v[n]) + (f" ({v[n] / first:.3f})" if i and first else "") if n in v else "—"
               for i, n in enumerate(order)]
        rows.append(f"| `{fam}` | `{name}` | " + " | ".join(row) + " |")
    return srcs, "\n".join(rows)


def r_first_stride(c: Ctx, folder: str = "families/i8-two-pass/first-stride"):
    """The int8 walk's first pass over every s-th tile (results/<folder>/<family>-s<s>.json, s = 1: one
    pass), traced: per family and B the median ms and the median candidates of the certified queries."""
    srcs = c.srcs_in(folder, "*-s*.json*")
    cells: dict = {}
    for s in srcs:
        m = re.match(r".*/(.+)-s(\d+)\.json", s)
        for name, b in c.run(s).benches.items():
            if b.error is None:
                cand = b.center("trace_certified_candidates_median")
                cells.setdefault((m[1], name), {})[int(m[2])] = (b.center("real_time"), cand)
    strides = sorted({x for v in cells.values() for x in v})
    rows = ["| family | fixture | " + " | ".join(f"s = {x}: ms (candidates)" for x in strides) + " |",
            "|---|---|" + "---:|" * len(strides)]
    for (fam, name), v in sorted(cells.items()):
        rows.append(f"| `{fam}` | `{name}` | " + " | ".join(
            f"{ms(v[x][0])} ({v[x][1]:,.0f})" if x in v else "—" for x in strides) + " |")
    return srcs, "\n".join(rows)


def r_scale_shard(c: Ctx):
    srcs = [c.src(f"results/scale/h200x2/h200x2-shard-g{g}.json") for g in (1, 2)]
    one, two = c.run(srcs[0]), c.run(srcs[1])
    rows = ["| B | G = 1 ms | G = 2 ms | speed-up | G = 2 exchange ms |", "|---:|---:|---:|---:|---:|"]
    for n, b in one.benches.items():
        m = re.match(r"^shard/([^/]+)/gpus:1/batch:(\d+)$", n)
        if not m or b.error is not None:
            continue
        b2 = two.get(n.replace("/gpus:1/", "/gpus:2/"))
        t1, t2 = b.center("real_time"), b2.center("real_time") if b2 else None
        label = thousands(m[2]) + (f" (`{m[1]}`)" if m[1] == "fused" else "")
        rows.append(f"| {label} | {ms(t1)} | {ms(t2)} | {ms(t1 / t2, 2) if t2 else '—'} | "
                    f"{ms(b2.center('exchange_ms')) if b2 else '—'} |")
    return srcs, "\n".join(rows)


def r_scale_shard4(c: Ctx):
    """G = 1, 2 and 4 ranks on one 4 x H200 machine, one build (results/scale/h200x4/)."""
    srcs = [c.src(f"results/scale/h200x4/shard-g{g}.json") for g in (1, 2, 4)]
    runs = [c.run(s) for s in srcs]
    rows = ["| pipeline | B | G = 1 ms | G = 2 ms | G = 4 ms | speed-up 2 | speed-up 4 | G = 4 exchange ms |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for n, b in runs[0].benches.items():
        m = re.match(r"^shard/([^/]+)/gpus:1/batch:(\d+)$", n)
        if not m or b.error is not None:
            continue
        t = [b.center("real_time")]
        four = None
        for g, run in ((2, runs[1]), (4, runs[2])):
            other = run.get(n.replace("/gpus:1/", f"/gpus:{g}/"))
            t.append(other.center("real_time") if other else None)
            if g == 4:
                four = other
        rows.append(f"| `{m[1]}` | {thousands(m[2])} | {ms(t[0])} | {ms(t[1])} | {ms(t[2])} | "
                    f"{ms(t[0] / t[1], 2) if t[1] else '—'} | {ms(t[0] / t[2], 2) if t[2] else '—'} | "
                    f"{ms(four.center('exchange_ms'), 3) if four else '—'} |")
    return srcs, "\n".join(rows)


def r_scale_stream_copy(c: Ctx, folder: str):
    """Streamed one-query pipelines (results/<folder>/*.json): what each chunk carried (the fp32 rows,
    or a reduced copy streamed from host memory), against that run's copy floor and the fp32 stream
    of the same model."""
    srcs = c.srcs_in(folder, "*.json*")
    rows = ["| file | fixture | family | streamed | ms | GB/s | of floor | chunks | centred chunks | fallbacks | "
            "× the fp32 stream | making the host copy, once (ms) |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for src in srcs:
        run = c.run(src)
        floor = run.get("floor/h2d_pinned")
        floor_gbps = floor.center("gb_per_s") if floor else None
        family = run.context.get("model_family", "iid")
        for name, b in run.family("stream/").items():
            if b.error is not None:
                continue
            fp32 = run.get(re.sub(r"^stream/[^/]+/", "stream/fused/", name))
            t, gbps = b.center("real_time"), b.center("h2d_gb_per_s")
            speedup = fp32.center("real_time") / t if fp32 and fp32 is not b and t else None
            making = b.center("host_copy_ms")
            rows.append(f"| `{Path(src).name}` | `{name}` | `{family}` | {b.label or '—'} | {ms(t)} | {ms(gbps, 2)} | "
                        f"{ms(gbps / floor_gbps, 3) if gbps and floor_gbps else '—'} | {ms(b.center('chunks'), 0)} | "
                        f"{ms(b.center('centred_chunks'), 0)} | {ms(b.center('fallbacks'), 0)} | "
                        f"{ms(speedup, 2) if speedup else '—'} | {ms(making, 0) if making else '—'} |")
    return srcs, "\n".join(rows)


def r_scale_replicas(c: Ctx, folder: str):
    """Row shards and replicas (split by rows, by queries, and as auto chooses) at G = 2 beside one
    GPU: the plain pipeline's wall time and the same sharded path with one rank, one build, one
    machine (results/<folder>/replicas-g{1,2}.json, rank 0's)."""
    srcs = [c.src(f"results/{folder}/replicas-g{g}.json") for g in (1, 2)]
    one, two = (c.run(s) for s in srcs)
    rows = ["| pipeline | B | one GPU ms | G = 1 shard ms | G = 2 row shards ms | G = 2 replicas by rows ms | "
            "G = 2 replicas by queries ms | auto | auto ms | auto speed-up (one GPU) | auto speed-up (G = 1 shard) |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]

    def t(run, name, counter="real_time"):
        b = run.get(name)
        return b.center(counter) if b is not None and b.has(counter) else None

    for n in one.benches:
        m = re.match(r"^shard/([^/]+)/gpus:1/batch:(\d+)$", n)
        if not m:
            continue
        p, batch = m[1], m[2]
        plain = t(one, f"batch/{p}/batch:{batch}", "wall_ms") if p.startswith("batch") \
            else t(one, f"pipeline/{p}", "wall_ms")
        g1 = t(one, n)
        shard2 = t(two, n.replace("/gpus:1/", "/gpus:2/"))
        rep = {sp: t(two, f"replica/{p}/gpus:2/split:{sp}/batch:{batch}") for sp in ("rows", "queries", "auto")}
        auto = two.get(f"replica/{p}/gpus:2/split:auto/batch:{batch}")
        label = auto.label.removeprefix("split:") if auto is not None and auto.label else "—"
        best = rep["auto"] if rep["auto"] is not None else shard2
        rows.append(f"| `{p}` | {thousands(batch)} | {ms(plain)} | {ms(g1)} | {ms(shard2)} | {ms(rep['rows'])} | "
                    f"{ms(rep['queries'])} | {label} | {ms(rep['auto'])} | "
                    f"{ms(plain / best, 2) if plain and best else '—'} | {ms(g1 / best, 2) if g1 and best else '—'} |")
    return srcs, "\n".join(rows)


def r_host_time(c: Ctx, rel: str):
    """A batch's wall clock beside its GPU event span, and the host's parts outside the events
    (the BatchSearcher's host_* counters), from one run."""
    src = c.src(rel)
    rows = ["| fixture | events ms | wall ms | wall − events | set-up | staging the queries | building the answers |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for n, b in c.run(src).benches.items():
        if b.error is None and n.startswith("batch/") and b.has("host_staging_ms"):
            t, w = b.center("real_time"), b.center("wall_ms")
            rows.append(f"| `{n}` | {ms(t)} | {ms(w)} | {ms(w - t)} | {ms(b.center('host_setup_ms'))} | "
                        f"{ms(b.center('host_staging_ms'))} | {ms(b.center('host_answers_ms'))} |")
    return [src], "\n".join(rows)


def r_intersect_host_clock(c: Ctx, rel: str):
    """The GPU batch rows by the host clock beside the all-core CPU peers and serial SVS, per set, one
    run: the kernels' events, the run with its answers back (host_answers_ms), the batch built from
    host queries (host_batch_ms), both (host_total_ms); the ratios are host clock to host clock."""
    src = c.src(rel)
    run = c.run(src)
    rows = ["| set | row | GPU events ms | run + answers back ms | batch built ms | host queries to host answers ms | "
            "× the faster all-core peer | × the peer, the batch already built | × serial SVS |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    sets = sorted({m[1] for n in run.benches if (m := re.match(r"^intersect/.+/set:([a-z0-9]+)$", n))})
    for st in sets:
        peers = [b.center("real_time") for n, b in run.benches.items()
                 if re.match(rf"^intersect/(roaring|simd_gallop)/allcores/set:{st}$", n) and b.error is None]
        serial = run.get(f"intersect/svs/serial/set:{st}")
        peer = min(peers) if peers else None
        for n, b in run.benches.items():
            if not re.match(rf"^intersect/[^/]+/[a-z]+_batch/set:{st}$", n) or b.error is not None:
                continue
            tot, ans = b.center("host_total_ms"), b.center("host_answers_ms")
            rows.append(f"| `{st}` | `{n}` | {ms(b.center('real_time'), 4)} | {ms(ans)} | "
                        f"{ms(b.center('host_batch_ms'))} | {ms(tot)} | {peer / tot:.2f} | {peer / ans:.2f} | "
                        f"{serial.center('real_time') / tot:,.1f} |")
        for n, b in run.benches.items():
            if re.match(rf"^intersect/((roaring|simd_gallop)/allcores|svs/serial)/set:{st}$", n) and b.error is None:
                rows.append(f"| `{st}` | `{n}` | — | — | — | {ms(b.center('real_time'))} | "
                            f"{peer / b.center('real_time'):.2f} | — | "
                            f"{serial.center('real_time') / b.center('real_time'):,.1f} |")
    return [src], "\n".join(rows)


def r_intersect_host_steps(c: Ctx, folder: str):
    """The host clock's steps, one run a commit (results/<folder>/h200-<commit>.json and the canonical
    results/intersection/h200-host-clock.json.gz): probe_coarse_batch's answers back, its batch built,
    both, against the faster all-core peer of the same run, per set."""
    srcs = c.srcs_in(folder, "h200-*.json*") + [c.src("results/intersection/h200-host-clock.json.gz")]
    srcs.sort(key=lambda src: str(c.run(src).context.get("date", "")))  # in the order they ran
    rows = ["| commit | set | run + answers back ms | batch built ms | host queries to host answers ms | "
            "the faster all-core peer ms | × the peer |", "|---|---|---:|---:|---:|---:|---:|"]
    for src in srcs:
        run = c.run(src)
        commit = run.context.get("distancies_commit", "?")
        for st in ("gov2", "real"):
            b = run.get(f"intersect/probe/coarse_batch/set:{st}")
            peers = [p.center("real_time") for n, p in run.benches.items()
                     if re.match(rf"^intersect/(roaring|simd_gallop)/allcores/set:{st}$", n) and p.error is None]
            if b is None or not peers:
                continue
            tot = b.center("host_total_ms")
            rows.append(f"| `{commit}` | `{st}` | {ms(b.center('host_answers_ms'))} | "
                        f"{ms(b.center('host_batch_ms'))} | {ms(tot)} | {ms(min(peers))} | {min(peers) / tot:.2f} |")
    return srcs, "\n".join(rows)


def r_scale_merge(c: Ctx):
    """The exchange before (host merge, pageable copies) and after (the device merge from 2^14
    gathered entries, kept page-locked staging): each side the mean of two alternated rounds'
    medians on the same 2 x H200 (results/scale/h200x2/merge/)."""
    srcs = {(g, side, r): c.src(f"results/scale/h200x2/merge/shard-g{g}-{side}-{r}.json")
            for g in (1, 2) for side in ("old", "new") for r in (1, 2)}
    rows = ["| fixture | before ms | after ms | before exchange ms | after exchange ms |",
            "|---|---:|---:|---:|---:|"]
    for g in (1, 2):
        for n, b in c.run(srcs[(g, "old", 1)]).benches.items():
            if not n.startswith("shard/") or b.error is not None:
                continue

            def mean(side, counter, n=n, g=g):
                vals = [c.run(srcs[(g, side, r)]).get(n) for r in (1, 2)]
                vals = [v.center(counter) for v in vals if v is not None and v.has(counter)]
                return sum(vals) / len(vals) if vals else None
            rows.append(f"| `{n}` | {ms(mean('old', 'real_time'))} | {ms(mean('new', 'real_time'))} | "
                        f"{ms(mean('old', 'exchange_ms'), 4)} | {ms(mean('new', 'exchange_ms'), 4)} |")
    return list(srcs.values()), "\n".join(rows)


def r_filter_candidates(c: Ctx):
    """The filtered scan's candidates a query against its buffer (scripts/analysis/filter_candidates.py)."""
    srcs = sorted(p.relative_to(c.root).as_posix() for p in (c.root / "results/batch/emulation").glob("*.json*")
                  if bench_json.is_json_name(p.name))
    rows = ["| model | K | queries | sample | expected | candidates: median / p99 / max | buffer | largest share |",
            "|---|---:|---:|---:|---:|---|---:|---:|"]
    docs = [c.json(s) for s in srcs]
    for d in sorted(docs, key=lambda d: (d["rows"], d["K"])):
        model = "GloVe 6B 50d" if "glove" in d["model"] else "synthetic"
        cand = d["candidates"]
        rows.append(f"| {model} ({thousands(d['rows'])} × {d['dim']}) | {d['K']} | {thousands(d['queries'])} | "
                    f"{thousands(d['sample_rows'])} | {thousands(d['expected'])} | "
                    f"{thousands(round(cand['median']))} / {thousands(round(cand['p99']))} / "
                    f"{thousands(cand['max'])} | "
                    f"{thousands(d['capacity'])} | {d['share_of_capacity']['max'] * 100:.0f} % |")
    return srcs, "\n".join(rows)


def r_one_query(c: Ctx):
    """The one-query pipelines over k (scripts/reports/one_query_report.py over the canonical run)."""
    from scripts.reports import one_query_report
    src = c.canonical("one-query", "h100")
    buf = io.StringIO()
    argv = sys.argv
    try:
        sys.argv = ["one_query_report.py", str(c.root / src)]
        with contextlib.redirect_stdout(buf):
            one_query_report.main()
    finally:
        sys.argv = argv
    return [src], buf.getvalue().strip("\n")


FAMILY_ORDER = ("iid", "aniso-0.5", "aniso-0.8", "aniso-0.9", "aniso-0.95", "aniso-0.98", "dirs-0.7", "clustered",
                "heavy", "glove6b50d")


def r_data_stats(c: Ctx):
    """Each data family's cosine statistics beside GloVe's (scripts/data/data_stats.py)."""
    from scripts.data import data_stats
    src = c.src("results/families/data-stats.json")
    doc = c.json(src)
    return [src], data_stats.markdown(doc["models"]).strip("\n")


def r_family_table(c: Ctx, gpu: str = "h200"):
    """The headline pipelines over every data family (scripts/reports/family_report.py)."""
    from scripts.reports import family_report
    names = [f"results/families/{gpu}-{f}.json" for f in FAMILY_ORDER]
    names += [f"results/families/{gpu}-peers-{p}-{f}.json" for f in FAMILY_ORDER for p in ("faiss", "torch")]
    srcs = [c.src(n) for n in names if bench_json.exists(c.root / n)]
    return srcs, family_report.markdown(family_report.load([c.root / s for s in srcs])).strip("\n")


def _medians(c: Ctx, src: str) -> dict:
    """name (suffixes dropped) -> the median entry of a run written by distancies-bench."""
    doc = c.json(src)
    out = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") == "median":
            out[re.sub(r"/(min_time|iterations|repeats|manual_time|real_time)[^/]*", "", b["run_name"])] = b
    return out


def r_main_suite(c: Ctx, gpu: str = "h200"):
    """The main suite's size and duration: its JSON (fixture_wall_s) and its console's last line."""
    src, console = c.src(f"results/main/{gpu}.json"), c.src(f"results/main/{gpu}.console.txt")
    doc = c.json(src)
    walls: dict = {}
    for b in doc["benchmarks"]:  # one value per report call of a fixture (its runs, then its aggregates)
        walls.setdefault(b["fixture"], set()).add(b["fixture_wall_s"])
    fixtures_s = sum(sum(v) for v in walls.values())
    done = re.search(r"suite \S+: (\d+) fixtures in (\d+):(\d+)", bench_json.read_text(c.root / console))
    elapsed = f"{int(done[2])} min {int(done[3])} s" if done else "—"
    return [src, console], ("| suite | fixtures | repetitions | elapsed (start-up included) | in the fixtures | GPU |\n"
                            "|---|---:|---:|---:|---:|---|\n"
                            f"| {doc['context'].get('suite', 'main')} | {len(walls)} | 3 | {elapsed} | "
                            f"{int(fixtures_s // 60)} min {fixtures_s % 60:.0f} s | {doc['context'].get('gpu', '?')} |")


def r_intersect_peers(c: Ctx, which: str = "h200"):
    """One set of a run (`STEM` or `STEM@SET`, the GOV2-shaped set by default): the serial and
    all-core CPU rows against the best GPU batch rows, each against the faster all-core peer."""
    stem, _, dset = which.partition("@")
    dset = dset or "gov2"
    src = c.src(f"results/intersection/{stem}.json")
    m = _medians(c, src)
    serial = m[f"intersect/svs/serial/set:{dset}"]["real_time"]
    peer = min(m[f"intersect/{p}/allcores/set:{dset}"]["real_time"] for p in ("roaring", "simd_gallop"))
    rows = ["| row | ms | × serial SVS | × the faster all-core peer | floor ratio (own minimal read) "
            "| × reading every distinct list |",
            "|---|---:|---:|---:|---:|---:|"]
    names = [f"intersect/{n}/set:{dset}" for n in ("svs/serial", "roaring/allcores", "simd_gallop/allcores",
                                                   "probe/coarse_batch", "hash/coarse_batch", "bitmap/coarse_batch")]
    for n in names:
        b = m[n]
        fr = b.get("floor_ratio")
        dr = b.get("distinct_read_ratio")
        rows.append(f"| `{n}` | {ms(b['real_time'])} | {serial / b['real_time']:,.1f} | {peer / b['real_time']:,.2f} | "
                    f"{'—' if fr is None else f'{fr:,.1f}'} | {'—' if dr is None else f'{dr:,.2f}'} |")
    return [src], "\n".join(rows)


_SETS = (("small", "small"), ("gov2", "GOV2-shaped"), ("real", "Linux source"))


def _plain_and_packed(m: dict, key: str):
    """The probing batch's median entries over plain and over packed lists on set `key`."""
    return m.get(f"intersect/probe/coarse_batch/set:{key}"), m.get(f"intersect/packed/coarse_batch/set:{key}")


def r_intersect_packed(c: Ctx, stem: str = "h200-packed"):
    """Per set of a run: the batch over packed lists against the same batch over plain ids, with
    the bytes each row's lists take on the device and what it must read at least."""
    src = c.src(f"results/intersection/{stem}.json")
    m = _medians(c, src)
    rows = ["| set | `probe_coarse_batch` ms | `packed_coarse_batch` ms | packed / plain | lists MB, plain → packed "
            "| everything searched, MB, plain → packed | least read MB, plain → packed |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for key, label in _SETS:
        plain, packed = _plain_and_packed(m, key)
        if plain is None or packed is None:
            continue
        rows.append(f"| {label} | {ms(plain['real_time'], 4)} | {ms(packed['real_time'], 4)} | "
                    f"{packed['real_time'] / plain['real_time']:.2f} × | "
                    f"{plain['lists_mb']:,.1f} → {packed['lists_mb']:,.1f} | "
                    f"{plain['index_mb']:,.1f} → {packed['index_mb']:,.1f} | "
                    f"{plain['min_read_mb']:,.2f} → {packed['min_read_mb']:,.2f} |")
    return [src], "\n".join(rows)


def r_intersect_packed_steps(c: Ctx, folder: str = "packed-search", final: str = "h200-packed"):
    """The packed row's steps (results/intersection/<folder>/h200-step*.json, then the final run
    results/intersection/<final>.json): packed / plain per set, and the plain row's median
    one-query latency (how run_one changed)."""
    srcs = c.srcs_in(f"intersection/{folder}", "h200-step*.json*") + [c.src(f"results/intersection/{final}.json")]
    rows = ["| run | " + " | ".join(f"{label}: packed / plain" for _, label in _SETS) +
            " | " + " | ".join(f"{label}: one query p50 µs (plain)" for _, label in _SETS[1:]) + " |",
            "|---|" + "---:|" * (2 * len(_SETS) - 1)]
    for src in srcs:
        m = _medians(c, src)
        cells = []
        for key, _ in _SETS:
            plain, packed = _plain_and_packed(m, key)
            ratio = None if plain is None or packed is None else packed["real_time"] / plain["real_time"]
            cells.append("—" if ratio is None else f"{ratio:.2f} ×")
        for key, _ in _SETS[1:]:
            b = m.get(f"intersect_latency/probe/coarse_batch/set:{key}")
            cells.append("—" if b is None else f"{b['p50_us']:.1f}")
        rows.append(f"| `{src}` | " + " | ".join(cells) + " |")
    return srcs, "\n".join(rows)


def r_intersect_latency(c: Ctx, stem: str = "h200-packed"):
    """Each query alone (intersect_latency fixtures): percentiles in µs per set and row."""
    src = c.src(f"results/intersection/{stem}.json")
    m = _medians(c, src)
    rows = ["| set | row | p50 µs | p90 µs | p99 µs | max µs |", "|---|---|---:|---:|---:|---:|"]
    for key, label in _SETS:
        for n, b in m.items():
            if n.startswith("intersect_latency/") and n.endswith(f"/set:{key}"):
                row = n[len("intersect_latency/"):-len(f"/set:{key}")]
                rows.append(f"| {label} | `{row}` | {b['p50_us']:.1f} | {b['p90_us']:.1f} | {b['p99_us']:.1f} | "
                            f"{b['max_us']:.1f} |")
    return [src], "\n".join(rows)


def r_certificate_trace(c: Ctx, folder: str = "families/certificate-trace"):
    """Each file of results/<folder>/ (a family's traced batch runs, DISTANCIES_BATCH_TRACE=on): per
    pipeline and B, the queries the certificate passed and failed, their median candidates, and
    their median margin k-th exact - (last key + bound)."""
    srcs = c.srcs_in(folder, "*.json*")
    rows = ["| family | pipeline | B | passed / failed | candidates, median (passed / failed) "
            "| margin, median (passed / failed) | bound |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for src in srcs:
        doc = c.json(src)
        family = doc["context"].get("model_family", Path(src).name.split(".")[0])
        for b in doc["benchmarks"]:
            if "trace_K" not in b or b.get("run_type") == "aggregate":
                continue
            name = re.sub(r"/(min_time|manual_time)[^/]*", "", b["name"])
            _, pipeline, batch = name.split("/")[:3]
            failed = b["trace_uncertified"]
            f_cand = "—" if not failed else f"{b['trace_uncertified_candidates_median']:,.0f}"
            f_margin = "—" if not failed else f"{b['trace_uncertified_margin_median']:.1e}"
            rows.append(f"| `{family}` | `{pipeline}` | {batch.split(':')[1]} | {b['trace_certified']:,.0f} / "
                        f"{failed:,.0f} | {b['trace_certified_candidates_median']:,.0f} / {f_cand} | "
                        f"{b['trace_certified_margin_median']:.1e} / {f_margin} | {b['trace_bound']:.1e} |")
    return srcs, "\n".join(rows)


def r_projected_bound(c: Ctx, which: str = ""):
    """scripts/analysis/projected_bound.py's candidates per family and variant (those the file has):
    median / 90th percentile (share of queries over K). `which`: the file's suffix (`full`:
    results/families/projected-bound-full.json)."""
    src = c.src("results/families/projected-bound" + (f"-{which}" if which else "") + ".json")
    doc = c.json(src)
    names = [("tiled_plain", "plain"), ("tiled_centred", "centred"), ("tiled_projected52", "projected, 52 columns"),
             ("tiled_fp32_term", "exact fp32 term"), ("projected52", "projected, 52 columns, a scale a row"),
             ("fp32_term", "exact fp32 term, a scale a row")]
    names = [(n, label) for n, label in names if all(n in v for v in doc["families"].values())]
    rows = ["| family | rows | " + " | ".join(label for _, label in names) + " |", "|---|---:|" + "---:|" * len(names)]
    for fam, v in doc["families"].items():
        cells = [f"{v[n]['median']:,.0f} / {v[n]['p90']:,.0f} ({100 * v[n]['over_k_list']:.0f} %)" for n, _ in names]
        rows.append(f"| `{fam}` | {v['rows']:,} | " + " | ".join(cells) + " |")
    return [src], "\n".join(rows)


def r_floor_audit(c: Ctx, which: str = "moments/h200"):
    """How many of a run's medians are under their floor (floor_ratio < 1): each is a bug."""
    study, gpu = which.split("/")
    src = c.src(f"results/{study}/{gpu}.json")
    ratios = [(n, b["floor_ratio"]) for n, b in _medians(c, src).items() if b.get("floor_ratio") is not None]
    under = sorted((r, n) for n, r in ratios if r < 1)
    low = f"lowest {under[0][0]:.2f}, `{under[0][1]}`" if under else "none"
    return [src], (f"| run | fixtures with a floor ratio | under their floor | |\n|---|---:|---:|---|\n"
                   f"| `{src}` | {len(ratios)} | {len(under)} | {low} |")


def r_matmul_anchors(c: Ctx, gpu: str = "h200"):
    """Every row at each shape against the fastest cuBLAS/cuBLASLt row of the same input precision
    writing fp32 C, and its share of dense peak at its own clock (the fixture's peak_fraction)."""
    src = c.src(f"results/matmul/{gpu}.json" if "-" in gpu else f"results/matmul/{gpu}-anchors.json")  # or a run's stem
    m = _medians(c, src)
    shape = {n: (b["M"], b["N"], b["K"]) for n, b in m.items()}
    best = {}
    for n, b in m.items():
        if re.match(r"matmul/cublas", n) and b.get("output_bits", 32) == 32:
            key = (shape[n], b.get("input_bits"))
            best[key] = min(best.get(key, float("inf")), b["real_time"])
    rows = ["| fixture | ms | TFLOP/s | of the best cuBLAS (same input, fp32 C) | of dense peak at its clock |",
            "|---|---:|---:|---:|---:|"]
    for n in sorted(m, key=lambda n: (shape[n][0] * shape[n][1] * shape[n][2], m[n]["real_time"])):
        b = m[n]
        ref = best.get((shape[n], b.get("input_bits")))
        pf = b.get("peak_fraction")
        of_cublas = "—" if not ref else f"{ref / b['real_time']:.2f}"
        of_peak = "—" if pf is None else f"{pf:.2f}"
        rows.append(f"| `{n}` | {ms(b['real_time'])} | {b.get('tflops', 0):,.1f} | {of_cublas} | {of_peak} |")
    return [src], "\n".join(rows)


RENDERERS = {
    "one-query": r_one_query,
    "filter-candidates": r_filter_candidates,
    "same-run": r_same_run,
    "ab": r_ab,
    "switch-ab": r_switch_ab,
    "settings": r_settings,
    "first-stride": r_first_stride,
    "scale-shard": r_scale_shard,
    "scale-merge": r_scale_merge,
    "scale-shard4": r_scale_shard4,
    "scale-replicas": r_scale_replicas,
    "scale-stream-copy": r_scale_stream_copy,
    "host-time": r_host_time,
    "intersect-host-clock": r_intersect_host_clock,
    "intersect-host-steps": r_intersect_host_steps,
    "results-files": r_results_files,
    "goals": r_goals,
    "batch-tiles": r_batch_tiles,
    "batch-figures": r_batch_figures,
    "batch-fused": r_batch_fused,
    "batch-filter": r_batch_filter,
    "batch-i8": r_batch_i8,
    "batch-roofline": r_batch_roofline,
    "variants": r_variants,
    "study-table": r_study_table,
    "analogy": r_analogy,
    "data-stats": r_data_stats,
    "family-table": r_family_table,
    "main-suite": r_main_suite,
    "intersect-peers": r_intersect_peers,
    "intersect-packed": r_intersect_packed,
    "intersect-latency": r_intersect_latency,
    "intersect-packed-steps": r_intersect_packed_steps,
    "projected-bound": r_projected_bound,
    "certificate-trace": r_certificate_trace,
    "matmul-anchors": r_matmul_anchors,
    "floor-audit": r_floor_audit,
}


def render(table_id: str, c: Ctx):
    """(inputs, body) of a table id; "goals:batch" passes "batch" to the goals renderer."""
    name, _, arg = table_id.partition(":")
    fn = RENDERERS.get(name)
    if fn is None:
        raise KeyError(f"unknown table id {table_id!r} (known: {', '.join(RENDERERS)})")
    return fn(c, arg) if arg else fn(c)


def doc_files(root: Path) -> list:
    out = []
    for g in DOC_GLOBS:
        out += sorted(Path(root).glob(g))
    return out


def process(root: Path = ROOT, write: bool = False, files=None) -> list:
    """Renders every block; returns [(file, table id, problem)] for blocks that differ (or fail).
    With write, rewrites the files whose blocks differ."""
    c = Ctx(root)
    problems = []
    for f in files or doc_files(root):
        text = f.read_text(encoding="utf-8")

        def sub(m, f=f):
            try:
                inputs, body = render(m["id"], c)
            except Exception as e:  # noqa: BLE001 - reported as a problem with the block
                problems.append((f, m["id"], f"cannot render: {e}"))
                return m[0]
            new = (f"<!-- generated: scripts/docs/render_docs.py {m['id']} from {' '.join(inputs)} -->\n"
                   f"{body}\n<!-- end generated -->")
            if new != m[0]:
                problems.append((f, m["id"], "differs from what the JSON gives"))
            return new

        new_text = BLOCK.sub(sub, text)
        if write and new_text != text:
            f.write_text(new_text, encoding="utf-8")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", action="store_true")
    g.add_argument("--check", action="store_true")
    g.add_argument("--list", action="store_true")
    ap.add_argument("--root", type=Path, default=ROOT)
    a = ap.parse_args(argv)
    if a.list:
        for f in doc_files(a.root):
            for m in BLOCK.finditer(f.read_text(encoding="utf-8")):
                print(f"{f.relative_to(a.root)}\t{m['id']}")
        return 0
    problems = process(a.root, write=a.write)
    for f, tid, why in problems:
        rel = f.relative_to(a.root) if f.is_absolute() else f
        print(f"render_docs: {rel}: block {tid}: {why}" + (" (rewritten)" if a.write and
                                                          not why.startswith("cannot") else ""))
    if a.check and problems:
        print("render_docs: run python3 -m scripts.docs.render_docs --write and commit the result", file=sys.stderr)
        return 1
    return 1 if any(why.startswith("cannot") for _, _, why in problems) else 0


if __name__ == "__main__":
    sys.exit(main())
