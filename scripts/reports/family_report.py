"""Per-family table of a benchmark run made once per data family (docs/data.md): rows are the
fixtures (one query and batch pipelines, `auto` with what it chose), columns the families; each
cell the median in ms with the queries redone on a fallback in round brackets and those the
wide re-rank answered from their candidates in square ones, and per family the
ratio of `auto` to the best pipeline of the same run at each batch size; with the peers' runs,
their rows (FAISS GPU, PyTorch; the share of checked queries they answered exactly where not
all) and how many times FAISS fp32's time `auto` takes.

    python -m scripts.reports.family_report results/families/h200-*.json* [--md OUT.md]

Each file is one `distancies-bench --family F` run (its context names the family,
`model_family`; a model file's run is named by the file: h200-glove6b50d.json[.gz] -> glove6b50d), or
one peer's run over a family's model (scripts/peers/peer_faiss.py, peer_torch_batch.py), named
GPU-peers-PEER-FAMILY.json with the family's ':' written '-'. Standard library only.
"""
import argparse
import re
import sys

from scripts.lib import atomic_write, bench_json

SUFFIX = re.compile(r"/(min_time|repeats|real_time|manual_time|iterations)[^/]*")
BATCH = re.compile(r"^batch/(?P<p>[^/]+)/batch:(?P<b>\d+)$")
AUTO = re.compile(r"^batch_auto/batch:(?P<b>\d+)$")
MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


PEER_FILE = re.compile(r"-peers-[a-z0-9_]+-(?P<f>.+)$")
FAISS_FP32 = re.compile(r"^peer/faiss_flat_ip/batch:(?P<b>\d+)$")


def medians(doc):
    """name -> (ms, fallbacks, label, exact share, widened, wall ms) of every median in a run."""
    out = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") != "median" or "error_occurred" in b:
            continue
        name = SUFFIX.sub("", b.get("run_name", b["name"]))
        out[name] = (b["real_time"] * MS[b.get("time_unit", "ms")], b.get("fallbacks"), b.get("label", ""),
                     b.get("exact_fraction"), b.get("widened"), b.get("wall_ms"))
    return out


def family_of(path, ctx):
    """The family a run is over: the bench's context, or the file's name (peers, model files)."""
    stem = bench_json.result_stem(path)
    peer = PEER_FILE.search(stem)
    if "peer" in ctx and peer:
        return re.sub(r"^(aniso|dirs)-", r"\1:", peer["f"])
    family = ctx.get("model_family")
    if family and family != "file":
        return family
    return stem.split("-", 1)[1] if "-" in stem else stem


def load(paths):
    runs = {}
    for p in paths:
        doc = bench_json.read_json(p)
        ctx = doc.get("context", {})
        r = runs.setdefault(family_of(p, ctx), {"medians": {}, "gpu": set(), "commit": set()})
        r["medians"].update(medians(doc))
        if "peer" in ctx:  # the peers' context names the device as a dict
            gpu = ctx.get("gpu")
            r["gpu"].add(gpu.get("name", "?") if isinstance(gpu, dict) else str(gpu))
        else:
            r["gpu"].add(ctx.get("gpu", "?"))
            r["commit"].add(ctx.get("distancies_commit", "?"))
    return runs


def auto_ratios(m):
    """B -> (auto ms, its choice, best pipeline, best ms) within one run."""
    out = {}
    for name, (ms, _, label, *_) in m.items():
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
    ms, fallbacks, _, exact, widened, _ = v
    text = f"{ms:.3f}" + (f" ({int(fallbacks)})" if fallbacks else "") + (f" [{int(widened)}]" if widened else "")
    return text + (f" ({exact:.0%} exact)" if exact is not None and exact < 1 else "")


def faiss_ratios(m):
    """B -> FAISS fp32 ms / auto's wall clock ms within one family: FAISS is timed by the host clock
    around its search (host queries in, host results out), so ours is its wall_ms, not its events."""
    out = {}
    for name, v in m.items():
        f = FAISS_FP32.match(name)
        a = m.get(f"batch_auto/batch:{f['b']}") if f else None
        if a:
            out[int(f["b"])] = v[0] / (a[5] or a[0])
    return out


def _faiss_by_family(runs, batch=None):
    """(family, B) -> FAISS fp32 / auto over the loaded runs (bench_json runs, as the goals give
    them); an error names every family whose FAISS peer is missing: a claim on every family needs
    every family measured."""
    fams = load([r.path for r in runs])
    ratios = {f: faiss_ratios(v["medians"]) for f, v in fams.items()}
    missing = [f for f, r in ratios.items() if not r or (batch is not None and batch not in r)]
    if missing:
        raise ValueError(f"no FAISS fp32 peer beside auto for {', '.join(missing)}")
    return {(f, b): v for f, r in ratios.items() for b, v in r.items() if batch is None or b == batch}


def _least_faiss(runs, batch=None):
    (fam, b), v = min(_faiss_by_family(runs, batch).items(), key=lambda kv: kv[1])
    return v, f"{fam}: peer/faiss_flat_ip/batch:{b} / batch_auto/batch:{b} (wall_ms), the least of {len(runs)} files"


def faiss_least_at_1024(runs):
    """The goal's figure: the least FAISS fp32 / auto ratio at B = 1,024 over every family."""
    return _least_faiss(runs, 1024)


def faiss_least_any(runs):
    """The goal's figure: the least FAISS fp32 / auto ratio at any batch size over every family."""
    return _least_faiss(runs)


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
    faiss = {f: faiss_ratios(runs[f]["medians"]) for f in families}
    for b in sorted({b for r in faiss.values() for b in r}):
        lines.append(f"| FAISS fp32 / auto's wall clock at B = {b:,} | " + " | ".join(
            f"{faiss[f][b]:.1f} ×" if b in faiss[f] else "–" for f in families) + " |")
    gpus = sorted(set().union(*(r["gpu"] for r in runs.values())))
    commits = sorted(set().union(*(r["commit"] for r in runs.values())))
    lines.append("")
    lines.append(f"Medians in ms on {', '.join(gpus)} (commit {', '.join(commits)}); in round brackets the queries "
                 "redone on a fallback, or the share of a peer's checked queries it answered exactly where not all; in "
                 "square ones the queries the wide re-rank answered from their candidates (docs/batch.md).")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--md")
    args = ap.parse_args(argv)
    try:
        text = markdown(load(args.runs))
    except (OSError, ValueError, KeyError, bench_json.BenchError) as e:
        raise SystemExit(f"family_report: {e}") from None
    if args.md:
        atomic_write.write_text(args.md, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
