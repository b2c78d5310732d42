"""Writes variants/embeddings/auto_policy.inc, the table behind `--variant auto`, from a committed
benchmark run (Google Benchmark JSON with our context): the median time of every exact batch
pipeline at each measured batch size, and the one-query figures the copy rule needs.

    python3 -m scripts.codegen.auto_policy RUN.json [MORE.json ...] [--out variants/embeddings/auto_policy.inc]
    python3 -m scripts.codegen.auto_policy --check RUN.json [MORE.json ...]

--check writes nothing: for every `batch_auto/batch:B` of the runs (what `--variant auto` ran,
its choice in the label) it prints the best `batch/<pipeline>/batch:B` of the same runs and the
ratio, and exits 1 if auto is more than 5 % slower anywhere (issue 15's goal).

Several runs (one sweep split over calls) are read as one: a later file's median of the same
name replaces an earlier one's; the header names every file and the first file's context.

Standard library only. The planner (variants/embeddings/auto_plan.cpp) interpolates between the
measured batch sizes; docs/variants.md ("auto") says how it decides.
"""
import argparse
import re
import sys
from pathlib import Path

from scripts.lib.atomic_write import write_text
from scripts.lib.bench_json import BenchError, read_json

BATCH = re.compile(r"^batch/(?P<p>[^/]+)/batch:(?P<b>\d+)(/|$)")
AUTO = re.compile(r"^batch_auto/batch:(?P<b>\d+)(/|$)")
AUTO_TOLERANCE = 1.05
ONE = {"pipeline/fused": "fused_ms", "pipeline/fused_f16": "fused_f16_ms",
       "floor/read_model": "read_ms", "floor/read_model_16bit": "read16_ms"}


def medians(doc):
    out = {}
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"]).split("/manual_time")[0].split("/min_time")[0]
        if "error_occurred" in b or b.get("skipped"):
            continue
        ms = b["real_time"] * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        # An aggregate median wins over single repetitions of the same name.
        if b.get("run_type") == "aggregate" or name not in out:
            out[name] = ms
    return out


def labels(doc):
    """batch_auto/batch:B -> the pipeline auto chose (the fixture's label)."""
    out = {}
    for b in doc["benchmarks"]:
        name = b.get("run_name", b["name"]).split("/manual_time")[0]
        if AUTO.match(name) and b.get("label"):
            out[name] = b["label"]
    return out


def check(docs, runs):
    """Rows (B, auto ms, its choice, best pipeline, best ms, ratio) and whether all are within the tolerance."""
    m, chosen = {}, {}
    for doc in docs:
        m.update(medians(doc))
        chosen.update(labels(doc))
    rows = []
    for name, ms in m.items():
        g = AUTO.match(name)
        if not g:
            continue
        b = int(g["b"])
        best = min(((t, BATCH.match(n)["p"]) for n, t in m.items() if BATCH.match(n) and int(BATCH.match(n)["b"]) == b),
                   default=None)
        if best is None:
            continue
        rows.append((b, ms, chosen.get(name, "?"), best[1], best[0], ms / best[0]))
    if not rows:
        sys.exit(f"auto_policy: error: {runs} has no batch_auto/batch:B beside batch/<pipeline>/batch:B figures")
    rows.sort()
    return rows, all(r[5] <= AUTO_TOLERANCE for r in rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, default=Path("variants/embeddings/auto_policy.inc"))
    ap.add_argument("--check", action="store_true", help="compare batch_auto with the best pipeline; write nothing")
    a = ap.parse_args(argv)
    try:
        docs = [read_json(r) for r in a.run]
    except BenchError as e:
        sys.exit(f"auto_policy: error: {e}")
    if a.check:
        rows, ok = check(docs, " + ".join(r.as_posix() for r in a.run))
        print("| B | auto ms | auto chose | best | best ms | auto / best |")
        print("|---:|---:|---|---|---:|---:|")
        for b, ms, pick, best, best_ms, ratio in rows:
            print(f"| {b} | {ms:.3f} | `{pick}` | `{best}` | {best_ms:.3f} | {ratio:.3f} |")
        if not ok:
            print(f"auto_policy: auto is more than {AUTO_TOLERANCE - 1:.0%} slower than the best somewhere",
                  file=sys.stderr)
        sys.exit(0 if ok else 1)
    ctx = docs[0].get("context", {})
    m = {}
    for doc in docs:
        m.update(medians(doc))
    runs = " + ".join(r.as_posix() for r in a.run)
    one = {}
    for name, key in ONE.items():
        if name not in m:
            sys.exit(f"auto_policy: error: {runs} has no median for {name}")
        one[key] = m[name]
    batch = {}
    for name, ms in m.items():
        g = BATCH.match(name)
        if g:
            batch.setdefault(g["p"], {})[int(g["b"])] = ms
    if not batch:
        sys.exit(f"auto_policy: error: {runs} has no batch/<pipeline>/batch:B figures")
    device = ctx.get("gpu", ctx.get("device", "unknown GPU"))
    commit = ctx.get("distancies_commit", ctx.get("commit", "unknown"))
    lines = [
        f"// Generated by scripts/codegen/auto_policy.py from {runs} ({device}, commit {commit}).",
        "// Do not edit: regenerate from a new run. Medians in milliseconds.",
        f"constexpr OneQueryFigures kOneQuery{{{one['fused_ms']:.6g}, {one['fused_f16_ms']:.6g}, "
        f"{one['read_ms']:.6g}, {one['read16_ms']:.6g}}};",
        "constexpr BatchFigure kBatchFigures[] = {",
    ]
    for p in sorted(batch):
        for b in sorted(batch[p]):
            lines.append(f'    {{"{p}", {b}, {batch[p][b]:.6g}}},')
    lines += ["};", f'constexpr const char* kPolicyMeasuredOn = "{device}";', ""]
    write_text(a.out, "\n".join(lines))
    print(f"auto_policy: wrote {a.out} ({sum(len(v) for v in batch.values())} batch figures, {len(batch)} pipelines)")


if __name__ == "__main__":
    main()
