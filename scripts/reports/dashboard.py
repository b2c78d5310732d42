"""Builds a static site of every committed benchmark run: per family a page with each
benchmark's time against commit order (one line per GPU, the spread of each run as error bars),
steps beyond the noise marked with their commit, filters by study, family and GPU, and the
studies' tables. One folder, no server, no network: the plotting library's script is copied in.

    python3 -m scripts.reports.dashboard [--results results] [--runs DIR ...] [--out site] [--repo .]

docs/dashboard.md says what is plotted and how a step is detected.
"""
from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from scripts.lib import bench_json, manifest  # the loader (plain or gzip); the current runs and the archived ones

SUFFIXES = re.compile(r"/(manual_time|real_time|iterations:\d+|min_time:[0-9.]+|repeats:\d+)")
STUDIES = {  # the first part of a fixture's name -> its study
    "moments": "moments",
    "intersect": "intersection",
    "matmul": "matmul",
}
UNIT_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def study_of(family: str) -> str:
    return STUDIES.get(family, "embeddings")


@dataclass
class Point:
    """One benchmark in one run: its median and spread over the run's repetitions."""
    median: float
    low: float
    high: float
    n: int
    floor_ratio: float | None = None


@dataclass
class Run:
    path: str
    device: str
    commit: str
    date: str
    points: dict[str, Point] = field(default_factory=dict)
    order: float = 0.0  # position in commit order


def fixture_name(b: dict) -> str:
    return SUFFIXES.sub("", b.get("run_name") or b["name"]).rstrip("/")


def load_run(path: Path) -> Run | None:
    """A Google Benchmark JSON (plain or .json.gz) with a context, or None for any other JSON."""
    try:
        doc = bench_json.read_json(path)
    except bench_json.BenchError:
        return None
    if not isinstance(doc, dict) or "benchmarks" not in doc or "context" not in doc:
        return None
    ctx = doc["context"]
    device = ctx.get("gpu") or ctx.get("device") or ctx.get("host_name", "unknown")
    # Another data family is another workload (docs/data.md), never a step of the same series.
    if ctx.get("model_family") not in (None, "", "iid", "file"):
        device = f"{device} · {ctx['model_family']}"
    run = Run(str(path), device,
              str(ctx.get("distancies_commit") or ctx.get("commit") or "unknown"), str(ctx.get("date", "")))
    samples: dict[str, list[float]] = {}
    agg: dict[str, dict[str, float]] = {}
    ratios: dict[str, float] = {}
    for b in doc["benchmarks"]:
        if b.get("error_occurred") or b.get("skipped") or "real_time" not in b:
            continue
        name = fixture_name(b)
        ms = b["real_time"] * UNIT_MS.get(b.get("time_unit", "ns"), 1e-6)
        if b.get("run_type") == "aggregate":
            agg.setdefault(name, {})[b.get("aggregate_name", "")] = ms
        else:
            samples.setdefault(name, []).append(ms)
            if "floor_ratio" in b:
                ratios[name] = b["floor_ratio"]
    for name, xs in samples.items():
        xs = sorted(xs)
        mid = len(xs) // 2
        med = agg.get(name, {}).get("median", xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2)
        run.points[name] = Point(med, xs[0], xs[-1], len(xs), ratios.get(name))
    return run if run.points else None


def short(commit: str) -> str:
    return commit.replace("-dirty", "")[:7]


def commit_order(repo: Path) -> dict[str, int]:
    """Short hash -> position, oldest first, from git log (empty when not a repository)."""
    try:
        out = subprocess.run(["git", "-C", str(repo), "log", "--format=%h", "--abbrev=7", "--reverse"],
                             capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return {}
    return {h[:7]: i for i, h in enumerate(out)}


def detect_steps(points: list[tuple[str, Point]], rel: float = 0.05) -> list[int]:
    """Indices i (>= 1) where run i moved beyond the noise of runs i-1 and i: its median differs
    from the previous one by more than both runs' spreads together (max - min over repetitions)
    and by more than `rel` of the previous median. Single-repetition runs have no spread, so only
    the relative threshold guards them (as asv does for runs without repeats)."""
    steps = []
    for i in range(1, len(points)):
        a, b = points[i - 1][1], points[i][1]
        noise = (a.high - a.low) + (b.high - b.low)
        if abs(b.median - a.median) > max(noise, rel * a.median):
            steps.append(i)
    return steps


# Colour-blind-safe pair (Okabe-Ito vermillion / blue), the marker shape differing too, so a
# step reads the same in grey.
STEP_STYLE = {"regression": {"symbol": "triangle-up", "color": "#D55E00", "mark": "\u25b2"},
              "improvement": {"symbol": "triangle-down", "color": "#0072B2", "mark": "\u25bc"}}


def classify_step(before: float, after: float, higher_is_better: bool = False) -> str:
    """'regression' or 'improvement' of a step: times are lower-is-better, counters such as
    throughput higher-is-better."""
    worse = after < before if higher_is_better else after > before
    return "regression" if worse else "improvement"


def change_pct(before: float, after: float) -> float:
    return 100.0 * (after - before) / before if before else float("inf")


def collect(paths: list[Path], order: dict[str, int]) -> list[Run]:
    runs = []
    for p in paths:
        found = [p] if not p.is_dir() else sorted(q for q in p.rglob("*")
                                                  if q.is_file() and bench_json.is_json_name(q.name))
        for f in found:
            r = load_run(f)
            if r:
                runs.append(r)
    # Commit order where git knows the commit; otherwise by date after the known ones.
    for r in runs:
        pos = order.get(short(r.commit))
        r.order = pos if pos is not None else len(order) + 1
    runs.sort(key=lambda r: (r.order, r.date, r.path))
    return runs


def family_of(name: str) -> str:
    parts = name.split("/")
    return parts[0] if parts[0] not in ("floor",) else "floor"


def series(runs: list[Run]) -> dict[str, dict[str, dict[str, list[tuple[str, Point, Run]]]]]:
    """family -> benchmark -> device -> [(label, point, run)] in commit order."""
    out: dict = {}
    for r in runs:
        for name, pt in r.points.items():
            label = f"{short(r.commit)} {r.date[:16].replace('T', ' ')}"
            out.setdefault(family_of(name), {}).setdefault(name, {}).setdefault(r.device, []).append((label, pt, r))
    return out


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<script src="plotly.min.js"></script>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 1.5em; max-width: 1200px; }}
.chart {{ height: 340px; }} nav a {{ margin-right: .8em; }} .step {{ color: #b00; }}
table {{ border-collapse: collapse; margin: .5em 0 1.5em; }} td, th {{ border: 1px solid #ccc; padding: 2px 6px; }}
.filters label {{ margin-right: 1em; }}
</style></head><body>
<nav><a href="index.html">all families</a></nav>
<h1>{title}</h1>
{body}
</body></html>
"""

# Colour-blind-safe, and never reused within a chart (Okabe-Ito, then Tableau).
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000",
           "#4E79A7", "#F28E2B", "#59A14F", "#B07AA1"]


def step_traces(device: str, pts: list, steps: list[int]) -> list[dict]:
    """One marker trace per direction that occurs, named '<direction> (<GPU>)' for the legend and
    the GPU filter; the hover gives before -> after and the change."""
    out = []
    for kind, st in STEP_STYLE.items():
        mine = [s for s in steps if classify_step(pts[s - 1][1].median, pts[s][1].median) == kind]
        if not mine:
            continue
        text = [f"{kind}: {pts[s - 1][1].median:.4g} -> {pts[s][1].median:.4g} ms "
                f"({change_pct(pts[s - 1][1].median, pts[s][1].median):+.1f} %)" for s in mine]
        out.append({"type": "scatter", "mode": "markers", "name": f"{st['mark']} {kind} ({device})",
                    "x": [pts[s][0] for s in mine], "y": [pts[s][1].median for s in mine], "text": text,
                    "marker": {"symbol": st["symbol"], "size": 14, "color": st["color"],
                               "line": {"width": 1, "color": "#000"}}, "hoverinfo": "x+text"})
    return out


def chart_js(div: str, bench: str, by_device: dict, steps_out: list) -> str:
    traces = []
    for i, (device, pts) in enumerate(sorted(by_device.items())):
        steps = detect_steps([(lbl, p) for lbl, p, _ in pts])
        for s in steps:
            m0, m1 = pts[s - 1][1].median, pts[s][1].median
            steps_out.append((bench, device, pts[s - 1][0], pts[s][0], m0, m1, classify_step(m0, m1)))
        colour = COLOURS[i % len(COLOURS)]
        traces.append({
            "type": "scatter", "mode": "lines+markers", "name": device, "x": [lbl for lbl, _, _ in pts],
            "y": [p.median for _, p, _ in pts],
            "error_y": {"type": "data", "symmetric": False, "array": [p.high - p.median for _, p, _ in pts],
                        "arrayminus": [p.median - p.low for _, p, _ in pts]},
            "text": [f"{Path(r.path).name}, {p.n} repetition(s)"
                     + (f", {p.floor_ratio:.3f} x floor" if p.floor_ratio else "") for _, p, r in pts],
            "line": {"color": colour}, "marker": {"color": colour},
        })
        traces += step_traces(device, pts, steps)
    layout = {"title": {"text": bench, "font": {"size": 13}}, "margin": {"t": 40, "l": 60, "r": 10, "b": 80},
              "yaxis": {"title": {"text": "median ms (bars: min-max of the run)"}, "rangemode": "tozero"},
              "xaxis": {"title": {"text": "commit (date of the run)"}, "type": "category"}, "showlegend": True}
    return f"Plotly.newPlot({json.dumps(div)}, {json.dumps(traces)}, {json.dumps(layout)}, {{displaylogo: false}});"


def md_tables_to_html(md: str) -> str:
    """The Markdown tables and headings of a committed report, as HTML (nothing else)."""
    out, rows = [], []

    def flush():
        if rows:
            cells = [[html.escape(c.strip()) for c in r.strip().strip("|").split("|")] for r in rows
                     if not re.match(r"^\|?\s*:?-", r.strip())]
            if cells:
                out.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in cells[0]) + "</tr>" +
                           "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in cells[1:])
                           + "</table>")
            rows.clear()
    for line in md.splitlines():
        if line.strip().startswith("|"):
            rows.append(line)
            continue
        flush()
        m = re.match(r"^(#{1,4})\s+(.*)", line)
        if m:
            out.append(f"<h{len(m.group(1)) + 1}>{html.escape(m.group(2))}</h{len(m.group(1)) + 1}>")
    flush()
    return "\n".join(out)


def steps_html(steps: list) -> str:
    """The family page's two lists: regressions, then improvements, each step with its fixture,
    GPU, both commits, before -> after and the change."""
    if not steps:
        return "<p>No step beyond the noise.</p>"
    out = []
    for kind, st in STEP_STYLE.items():
        mine = [x for x in steps if x[6] == kind]
        items = "".join(
            f'<li class="step {kind}" style="color:{st["color"]}">{st["mark"]} {html.escape(b)} on {html.escape(d)}: '
            f"{m0:.4g} ms at {html.escape(c0)} &rarr; {m1:.4g} ms at {html.escape(c1)} "
            f"({change_pct(m0, m1):+.1f} %)</li>" for b, d, c0, c1, m0, m1, _ in mine)
        out.append(f'<h2>{kind.capitalize()}s ({len(mine)})</h2>'
                   + (f'<ul id="{kind}s">{items}</ul>' if mine else "<p>None.</p>"))
    return "".join(out)


def latest_step(steps: list, runs: list[Run]) -> tuple | None:
    """The step at the latest commit (commit order, then date) of a family, or None."""
    order = {f"{short(r.commit)} {r.date[:16].replace('T', ' ')}": (r.order, r.date) for r in runs}
    return max(steps, key=lambda x: order.get(x[3], (-1, "")), default=None)


def build(runs: list[Run], out: Path, tables: list[Path], plotly_js: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(plotly_js, out / "plotly.min.js")
    data = series(runs)
    pages = {}
    all_steps = []
    for family, benches in sorted(data.items()):
        divs, scripts, steps = [], [], []
        for i, (bench, by_device) in enumerate(sorted(benches.items())):
            div = f"chart-{i}"
            devices = " ".join(sorted(by_device))
            divs.append(f'<div class="chart" id="{div}" data-bench="{html.escape(bench)}" '
                        f'data-gpus="{html.escape(devices)}"></div>')
            scripts.append(chart_js(div, bench, by_device, steps))
        gpus = sorted({d for b in benches.values() for d in b})
        filt = ('<div class="filters">GPU: ' + "".join(
            f'<label><input type="checkbox" class="gpu" value="{html.escape(g)}" checked> {html.escape(g)}</label>'
            for g in gpus) + "</div>")
        step_html = steps_html(steps)
        js = "\n".join(scripts) + """
document.querySelectorAll('input.gpu').forEach(box => box.addEventListener('change', () => {
  const on = [...document.querySelectorAll('input.gpu:checked')].map(b => b.value);
  document.querySelectorAll('.chart').forEach(c => {
    const gd = c; if (!gd.data) return;
    Plotly.restyle(gd, {visible: gd.data.map(t => on.some(g => t.name === g || t.name.endsWith(' (' + g + ')')))});
  });
}));"""
        body = (f"<p>Study: {study_of(family)}. {len(benches)} benchmarks; x: commits in git order (the run's date); "
                f"one line per GPU (runs of different GPUs are never joined).</p>" + filt + step_html +
                "\n".join(divs) + f"<script>{js}</script>")
        name = f"family-{re.sub(r'[^A-Za-z0-9_-]', '_', family)}.html"
        (out / name).write_text(PAGE.format(title=f"{family}: time across commits", body=body))
        fam_runs = [r for r in runs if any(family_of(n) == family for n in r.points)]
        pages[family] = {"page": name, "benchmarks": len(benches), "steps": len(steps), "study": study_of(family),
                         "gpus": gpus, "latest": short(fam_runs[-1].commit) if fam_runs else "",
                         "latest_step": latest_step(steps, fam_runs)}
        all_steps += steps
    # Index: filters by study and GPU over the family list; the studies' tables.
    studies = sorted({p["study"] for p in pages.values()})
    gpus = sorted({g for p in pages.values() for g in p["gpus"]})
    rows = "".join(
        f'<tr data-study="{html.escape(p["study"])}" data-gpus="{html.escape("|".join(p["gpus"]))}">'
        f'<td><a href="{p["page"]}">{html.escape(f)}</a></td><td>{html.escape(p["study"])}</td>'
        f'<td>{html.escape(p["latest"])}</td><td>{p["benchmarks"]}</td><td>{p["steps"]}</td>'
        f'{latest_step_cells(p["latest_step"])}<td>{html.escape(", ".join(p["gpus"]))}</td></tr>'
        for f, p in sorted(pages.items()))
    def sel(ident, opts):
        return (f'<select id="{ident}"><option value="">all</option>' +
                "".join(f'<option>{html.escape(o)}</option>' for o in opts) + "</select>")
    runs_list = "".join(f"<li>{html.escape(Path(r.path).as_posix())}: {html.escape(r.device)}, commit "
                        f"{html.escape(r.commit)}, {html.escape(r.date)}, {len(r.points)} benchmarks</li>"
                        for r in runs)
    table_html = "".join(f"<h2>{html.escape(t.as_posix())}</h2>" + md_tables_to_html(bench_json.read_text(t))
                         for t in tables if bench_json.exists(t))
    body = (f"<p>{len(runs)} runs, {len(pages)} families, {len(all_steps)} steps beyond the noise.</p>"
            f'<p class="filters">Study: {sel("study", studies)} GPU: {sel("gpu", gpus)}</p>'
            f'<table id="families"><tr><th>family</th><th>study</th><th>latest commit</th><th>fixtures</th>'
            '<th>steps</th>'
            f'<th>latest step</th><th>change</th><th>at commit</th><th>GPUs</th></tr>{rows}</table>'
            "<script>function filt(){const s=document.getElementById('study').value,"
            "g=document.getElementById('gpu').value;"
            "document.querySelectorAll('#families tr[data-study]').forEach(r=>{r.style.display="
            "((!s||r.dataset.study===s)&&(!g||r.dataset.gpus.split('|').includes(g)))?'':'none';});}"
            "document.getElementById('study').onchange=filt;document.getElementById('gpu').onchange=filt;</script>"
            f"<h2>Runs</h2><ul>{runs_list}</ul><h2>Study tables</h2>{table_html}")
    (out / "index.html").write_text(PAGE.format(title="distancies: every committed run", body=body))
    for p in pages.values():  # summary.json: the latest step as a plain record
        ls = p.pop("latest_step")
        p["latest_step"] = None if ls is None else dict(zip(("fixture", "gpu", "before", "after", "before_ms",
                                                                "after_ms", "direction"), ls, strict=True))
    summary = {"runs": len(runs), "families": pages, "steps": len(all_steps)}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def latest_step_cells(step: tuple | None) -> str:
    if step is None:
        return "<td>none</td><td></td><td></td>"
    b, d, _, c1, m0, m1, kind = step
    st = STEP_STYLE[kind]
    return (f'<td class="{kind}" style="color:{st["color"]}">{st["mark"]} {kind}: {html.escape(b)} '
            f'on {html.escape(d)}</td>'
            f"<td>{change_pct(m0, m1):+.1f} %</td><td>{html.escape(c1.split()[0])}</td>")


def plotly_script() -> Path:
    try:
        import plotly  # the package carries its own script
    except ImportError:
        sys.exit("dashboard: error: the plotly package is missing (pip install -r scripts/requirements.txt)")
    p = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not p.exists():
        sys.exit(f"dashboard: error: {p} not found in the plotly package")
    return p


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=Path("results"), help="committed runs (searched recursively)")
    ap.add_argument("--runs", type=Path, action="append", default=[], help="another folder of runs (CI), repeatable")
    ap.add_argument("--out", type=Path, default=Path("site"))
    ap.add_argument("--repo", type=Path, default=Path("."), help="git checkout giving the commit order")
    ap.add_argument("--tables", type=Path, action="append", default=None,
                    help="Markdown reports whose tables go on the index (default: the committed study reports)")
    ap.add_argument("--no-tables", action="store_true", help="no study tables on the index")
    a = ap.parse_args(argv)
    tables = [] if a.no_tables else a.tables if a.tables is not None else [a.results / "h100-report.md"]
    # The current runs are the files results/manifest.json names; the runs it archived come back
    # from git history (the commit each was last in), so the trends keep their earlier points.
    history = manifest.archived_runs(a.results / "manifest.json", a.repo, Path(tempfile.mkdtemp(prefix="dashboard-")))
    runs = collect([a.results] + a.runs + history, commit_order(a.repo))
    if not runs:
        sys.exit(f"dashboard: error: no benchmark runs (Google Benchmark JSON with a context) under {a.results}")
    s = build(runs, a.out, tables, plotly_script())
    print(f"dashboard: {s['runs']} runs, {len(s['families'])} families, {s['steps']} steps -> {a.out}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
