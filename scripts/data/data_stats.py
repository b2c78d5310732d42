"""What a model's data is like, for docs/data.md: the mean and spread of pairwise cosines and
how far a query's 10th best stands out of the rest.

Queries are model rows (row (i * 104729) % rows, the benchmarks' rule), each against every other
row in fp64. Per model: mean and standard deviation of all those cosines, and, per query, the
10th best cosine in standard deviations above the mean ("z10") and the gap from the 10th to the
11th best (what a bound must resolve), as medians over the queries.

    python -m scripts.data.data_stats MODEL [MODEL ...] --queries 200 --out stats.json [--md stats.md]

MODEL is a distancies native file (.dsv, `distancies gen --family F`) or a word2vec binary.
"""
import argparse
import json
import statistics
import sys

import numpy as np

from scripts.lib import atomic_write
from scripts.lib.w2v_binary import read_w2v
from scripts.peers.peer_torch import load_native

K = 10


def load_rows(path):
    with open(path, "rb") as f:
        magic = f.read(8)
    if magic == b"DSTNCIES":
        _, _, vectors = load_native(path)
        return np.asarray(vectors, dtype=np.float64)
    _, vectors = read_w2v(path)
    return np.asarray(vectors, dtype=np.float64)


def model_stats(x, queries, block=1 << 16):
    """Cosine statistics of `queries` model rows against every other row (fp64)."""
    rows = x.shape[0]
    norms = np.linalg.norm(x, axis=1)
    norms[norms == 0] = 1.0  # a zero row has cosine 0 with everything
    picked = [(i * 104729) % rows for i in range(min(queries, rows))]
    q = x[picked] / norms[picked, None]
    total, total_sq, count = 0.0, 0.0, 0
    best = np.full((len(picked), K + 1), -np.inf)
    for lo in range(0, rows, block):
        hi = min(rows, lo + block)
        c = q @ (x[lo:hi] / norms[lo:hi, None]).T
        for j, r in enumerate(picked):
            if lo <= r < hi:
                c[j, r - lo] = np.nan  # not itself
        finite = np.nan_to_num(c, nan=0.0)
        total += finite.sum()
        total_sq += (finite * finite).sum()
        count += c.size - int(np.isnan(c).sum())
        c = np.where(np.isnan(c), -np.inf, c)
        part = -np.partition(-c, K, axis=1)[:, :K + 1] if c.shape[1] > K else c
        best = -np.sort(-np.concatenate([best, part], axis=1), axis=1)[:, :K + 1]
    mean = total / count
    sd = max(total_sq / count - mean * mean, 0.0) ** 0.5
    z10 = [(b[K - 1] - mean) / sd if sd > 0 else 0.0 for b in best]
    gap = [b[K - 1] - b[K] for b in best]
    return {"rows": rows, "dim": x.shape[1], "queries": len(picked), "mean_cosine": mean, "sd_cosine": sd,
            "z10_median": statistics.median(z10), "gap_10_11_median": statistics.median(gap),
            "top10_median": statistics.median(b[K - 1] for b in best)}


def markdown(results):
    lines = ["| model | rows × dim | mean cosine | spread (sd) | 10th best (median) | 10th best, sds out "
             "| gap 10th–11th |",
             "|---|---|---|---|---|---|---|"]
    for name, s in results.items():
        lines.append(f"| {name} | {s['rows']:,} × {s['dim']} | {s['mean_cosine']:.3f} | {s['sd_cosine']:.3f} | "
                     f"{s['top10_median']:.3f} | {s['z10_median']:.1f} | {s['gap_10_11_median']:.2e} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help="NAME=PATH (or PATH: the file's name is the model's)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", required=True)
    ap.add_argument("--md")
    args = ap.parse_args(argv)
    if args.queries < 1:
        raise SystemExit("data_stats: --queries must be at least 1")
    results = {}
    for spec in args.models:
        name, _, path = spec.rpartition("=") if "=" in spec else (spec, "", spec)
        try:
            x = load_rows(path)
        except (OSError, ValueError) as e:
            raise SystemExit(f"data_stats: {path}: {e}") from None
        results[name] = model_stats(x, args.queries)
        print(f"data_stats: {name}: {results[name]}", file=sys.stderr)
    atomic_write.write_text(args.out, json.dumps({"k": K, "models": results}, indent=1) + "\n")
    if args.md:
        atomic_write.write_text(args.md, markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
