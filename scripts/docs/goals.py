"""The goals the docs claim, checked against the committed result files: met / missed / unknown.

Each study's goals are in results/goals/<study>.json, a list of objects:

    {"id": "batch.b1024_i8", "text": "...", "claimed_in": "README.md",
     "evidence": {"file": "results/...json[.gz]",     # or canonical:STUDY/GPU, sweep:STUDY/GPU;
                                                      # null: no evidence file -> unknown
                  "fixture": "^batch/batch_i8_filter/batch:1024$",  # regex on base names
                  "counter": "real_time",             # ms for times
                  "statistic": "median",              # over repetitions: median, min, max
                  "over": "one",                      # over matching fixtures: one, max, min
                  "where_at_most": {"elements": 65536},  # optional: keep fixtures whose counter <= N
                  "ratio_to": {"file": ..., "fixture": ..., "counter": ...}},  # optional
     "comparison": "<=", "threshold": 2.0, "unit": "ms"}

or, for a JSON that is not Google Benchmark output, "evidence": {"file": ..., "path": [...],
"threshold_path": [...]} where a path step is a key, an index, or {"key": value} to pick the
list element whose key has that value.

or, for a figure a report computes from several fixtures, "evidence": {"file": ..., "derive":
"scripts.reports.scale_report:one_query_fraction"}: that function is given the loaded runs (the
file's, its "sweep:" parts, or each of a list of files) and returns (value, where).

With "ratio_to", the value is (the peer's value) / (ours): "ours is N x faster than the peer".
With "files" (a list) in place of "file", the goal is evaluated on each file (a "ratio_to"
without a file of its own reads the same one) and the worst is kept: "across": "max" (the
default) or "min" picks it, and "where" names its file.

    python3 -m scripts.docs.goals [--study S] [--strict] [--markdown]

Exit 0 unless --strict and some goal is missed or unknown.
"""
from __future__ import annotations

import argparse
import importlib
import operator
import re
import statistics
import sys
from pathlib import Path

from scripts.lib import bench_json, manifest

ROOT = Path(__file__).resolve().parents[2]
GOALS = Path("results") / "goals"
_CMP = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt, "==": operator.eq}


class GoalError(Exception):
    """A goal's definition cannot be evaluated (bad regex, no match, unknown counter)."""


def load_goals(root: Path = ROOT, study: str | None = None) -> list:
    out = []
    for f in sorted((Path(root) / GOALS).glob("*.json")):
        if study and f.stem != study:
            continue
        for g in bench_json.read_json(f):
            g.setdefault("study", f.stem)
            out.append(g)
    return out


def _stat(bench, counter: str, statistic: str):
    vals = bench.values(counter)
    if vals:
        return {"median": statistics.median, "min": min, "max": max,
                "mean": statistics.fmean}[statistic](vals)
    agg = bench.aggregates.get(statistic, {}).get(counter)
    if agg is None:
        agg = bench.center(counter)
    if agg is None:
        raise GoalError(f"{bench.name} has no counter {counter!r}")
    return agg


def resolve(root: Path, spec: str) -> list:
    """A goal's file: a path, "canonical:STUDY/GPU" (the manifest's main run) or "sweep:STUDY/GPU"
    (the main run and its parts, later files winning), as paths relative to the root."""
    kind, _, rest = spec.partition(":")
    if kind not in ("canonical", "sweep") or not rest:
        return [spec]
    study, gpu = rest.split("/", 1)
    try:
        paths = manifest.parts(study, gpu, root) if kind == "sweep" else [manifest.canonical(study, gpu, root)]
    except (OSError, ValueError, manifest.ManifestError):
        return []
    return [Path(p).relative_to(root).as_posix() for p in paths]


def evidence_specs(ev: dict) -> list:
    """Every file spec a goal's evidence names: "file" (one or a list), "files", ratio_to's."""
    out = []
    for f in (ev.get("file"), ev.get("files"), (ev.get("ratio_to") or {}).get("file")):
        out += f if isinstance(f, list) else [f] if f else []
    return out


def _bench_value(root: Path, ev: dict, cache: dict):
    benches: dict = {}
    for rel in resolve(root, ev["file"]):
        path = Path(root) / rel
        run = cache.get(path) or cache.setdefault(path, bench_json.load(str(path)))
        benches.update(run.benches)
    rx = re.compile(ev["fixture"])
    matches = [b for n, b in benches.items() if rx.search(n) and b.error is None]
    for counter, limit in (ev.get("where_at_most") or {}).items():   # e.g. {"elements": 65536}
        matches = [b for b in matches if (v := b.center(counter)) is not None and v <= limit]
    if not matches:
        raise GoalError(f"no fixture matches {ev['fixture']!r} in {ev['file']}")
    vals = [_stat(b, ev.get("counter", "real_time"), ev.get("statistic", "median")) for b in matches]
    over = ev.get("over", "one")
    if over == "one":
        if len(vals) != 1:
            raise GoalError(f"{len(vals)} fixtures match {ev['fixture']!r} (over: one)")
        return vals[0], matches[0].name
    pick = max if over == "max" else min
    i = vals.index(pick(vals))
    return vals[i], matches[i].name


def _walk(doc, path: list):
    for step in path:
        if isinstance(step, dict):
            (k, v), = step.items()
            doc = next(x for x in doc if x.get(k) == v)
        else:
            doc = doc[step]
    return doc


def _evaluate_each(goal: dict, root: Path, cache: dict) -> dict:
    """A goal with "files": evaluated on each file, the worst one kept (any unknown: unknown)."""
    ev = goal["evidence"]
    per = []
    for f in ev["files"]:
        one = {k: v for k, v in ev.items() if k not in ("files", "across")}
        one["file"] = f
        if "ratio_to" in ev:
            one["ratio_to"] = {"file": f, **ev["ratio_to"]}
        per.append(evaluate({**goal, "evidence": one}, root, cache))
    unknown = [r for r in per if r["status"] == "unknown"]
    if unknown:
        return unknown[0]
    pick = max if ev.get("across", "max") == "max" else min
    worst = pick(per, key=lambda r: r["value"])
    return {**worst, "where": f"{worst['file']}: {worst['where']}"}


def evaluate(goal: dict, root: Path = ROOT, cache: dict | None = None) -> dict:
    """{id, text, status: met|missed|unknown, value, threshold, why}."""
    cache = {} if cache is None else cache
    ev = goal.get("evidence") or {}
    if ev.get("files"):
        return _evaluate_each(goal, root, cache)
    out = {"id": goal["id"], "text": goal["text"], "study": goal.get("study"),
           "comparison": goal["comparison"], "threshold": goal.get("threshold"),
           "unit": goal.get("unit", ""), "value": None, "file": ev.get("file")}
    if not ev.get("file"):
        return {**out, "status": "unknown", "why": ev.get("why", "no evidence file")}
    specs = ev["file"] if isinstance(ev["file"], list) else [ev["file"]]   # a list: "derive" only
    files = [f for spec in specs for f in resolve(root, spec)]
    out["file"] = ", ".join(files) or ", ".join(specs)
    absent = [f for f in files if not bench_json.exists(Path(root) / f)]
    if not files or absent:
        return {**out, "status": "unknown", "why": f"{', '.join(absent) or out['file']} not in the tree"}
    try:
        if "derive" in ev:
            module, _, func = ev["derive"].partition(":")
            runs = [cache.get(Path(root) / f) or cache.setdefault(Path(root) / f, bench_json.load(str(Path(root) / f)))
                    for f in files]
            value, where = getattr(importlib.import_module(module), func)(runs)
        elif "path" in ev:
            doc = bench_json.read_json(Path(root) / ev["file"])
            value, where = _walk(doc, ev["path"]), "/".join(map(str, ev["path"]))
            if "threshold_path" in ev:
                out["threshold"] = _walk(doc, ev["threshold_path"])
        else:
            value, where = _bench_value(root, ev, cache)
            if "ratio_to" in ev:
                ours = value
                peer, pwhere = _bench_value(root, ev["ratio_to"], cache)
                value, where = peer / ours, f"{pwhere} / {where}"
    except (GoalError, bench_json.BenchError, KeyError, IndexError, StopIteration, re.error, ValueError,
            ImportError, AttributeError) as e:
        return {**out, "status": "unknown", "why": f"cannot evaluate: {e}"}
    met = _CMP[goal["comparison"]](value, out["threshold"])
    return {**out, "value": value, "where": where, "status": "met" if met else "missed", "why": ""}


def fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) >= 100):
        return f"{int(v):,}"
    if abs(v) != 0 and (abs(v) < 1e-3 or abs(v) >= 1e6):
        return f"{v:.2g}"
    return f"{v:.3g}" if abs(v) < 100 else f"{v:,.1f}"


def markdown(results: list) -> str:
    rows = ["| goal | study | measured | target | status | evidence |", "|---|---|---:|---:|---|---|"]
    for r in results:
        unit = f" {r['unit']}" if r["unit"] else ""
        status = {"met": "met", "missed": "**missed**", "unknown": "unknown"}[r["status"]]
        if r["status"] == "unknown":
            status += f" ({r['why']})"
        measured = fmt(r["value"]) + (unit if r["value"] is not None else "")
        target = f"{r['comparison']} {fmt(r['threshold'])}{unit}"
        ev = f"`{r['file']}`" if r["file"] else "—"
        rows.append(f"| {r['text']} | {r['study']} | {measured} | {target} | {status} | {ev} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--study")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed or unknown")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table instead of lines")
    ap.add_argument("--root", type=Path, default=ROOT)
    a = ap.parse_args(argv)
    cache: dict = {}
    results = [evaluate(g, a.root, cache) for g in load_goals(a.root, a.study)]
    if a.markdown:
        print(markdown(results))
    else:
        for r in results:
            unit = f" {r['unit']}" if r["unit"] else ""
            tail = f"  ({r['why']})" if r["why"] else f"  [{r.get('where', '')}]"
            print(f"{r['status']:7} {r['id']}: {fmt(r['value'])}{unit if r['value'] is not None else ''} "
                  f"{r['comparison']} {fmt(r['threshold'])}{unit}{tail}")
    counts = {s: sum(r["status"] == s for r in results) for s in ("met", "missed", "unknown")}
    print(f"goals: {counts['met']} met, {counts['missed']} missed, {counts['unknown']} unknown",
          file=sys.stderr)
    return 1 if a.strict and (counts["missed"] or counts["unknown"]) else 0


if __name__ == "__main__":
    sys.exit(main())
