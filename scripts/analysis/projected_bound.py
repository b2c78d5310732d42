"""How many candidates the int8 walk's bound lets through, with the mean direction's share as
52 extra int8 columns (today's projected copy) or as one exact fp32 term a row (the design left
open in issue 38), on the data families.

    .venv/bin/python -m scripts.analysis.projected_bound FAMILY=MODEL [...] --queries 200 --out F.json
    .venv/bin/python -m scripts.analysis.projected_bound FAMILY=MODEL --queries 100 --large --out F.json

(--large: a model of millions of rows, held in float32, the tiled copy's two designs only.
--room R [R ...]: each family once per R, every upper bound carrying R more: the int8 walk's keys
carry the room it leaves for the re-rank's fp32 error, `i8_walk_fp32_bound` in
variants/embeddings/precision.cpp, which the counts without it leave out.)

A CPU emulation in float64 of the Cauchy-Schwarz bound of docs/batch.md ("8-bit tiles",
"Projected int8 copies") with a per-row int8 scale (the tiled copy shares one scale a 64-row
tile, which only widens every variant's bound alike). Queries are model rows (row
(i * 104,729) mod rows, the benchmarks' rule); k = 10. For each query and variant, the candidates
are the rows whose upper bound (approximation + bound) reaches the query's exact 10th-best
similarity: the fewest any threshold lets through, what the re-rank must read; a query with more
than K = 64 of them cannot be certified from its K best keys (the wide re-rank or a fallback
answers it). Variants, in unit-row coordinates (x_n = x / |x|, mu the mean of the x_n, y = x_n - mu):

- `plain`: the rows x_n and the query q as they are (no centring);
- `centred`: y against q (the centred copy before projection);
- `projected52`: Y = (y, v, ..., v), v = mu . y, 52 copies; Q = (q - w mu, w / 52, ...), w = q . mu / |mu|^2
  (today's copy at D = 300: Q . Y = q . y);
- `fp32_term`: y against q - w mu, plus w v exactly (the bound on the residuals alone).

Writes one JSON object: per family, per variant, the median, 90th percentile and largest
candidate count and the share of queries with more than K candidates.
"""
import argparse
import json
import sys

import numpy as np

from scripts.data.data_stats import load_rows
from scripts.lib import atomic_write

K_BEST, K_LIST, EXTRA = 10, 64, 52


def codes(m):
    """Per-row int8 codes of m (rows as vectors): scale s = max |m_j| / 127, c = rint(m / s), and the
    row's exact error norm |m - s c| (float64)."""
    s = np.abs(m).max(axis=1) / 127.0
    s[s == 0] = 1.0
    c = np.rint(m / s[:, None])
    return s, c, np.linalg.norm(m - s[:, None] * c, axis=1)


def tiled_codes(m, tile=64):
    """The tiled copy's codes (tiled_i8.cuh) in unit-row coordinates: rows sorted by u* = 127 /
    max |m_j|, one scale a tile of 64 sorted rows (1 / U, U the tile's smallest u*), and each
    row's error and norm replaced by the tile's largest (nu_max, rho_max). Returned in the
    model's row order."""
    peak = np.abs(m).max(axis=1)
    order = np.argsort(np.where(peak > 0, 127.0 / np.maximum(peak, 1e-300), np.inf), kind="stable")
    s = np.empty(len(m))
    nu = np.empty(len(m))
    rho = np.empty(len(m))
    c = np.empty_like(m)
    for t0 in range(0, len(m), tile):
        rows = order[t0:t0 + tile]
        scale = max(peak[rows].max() / 127.0, 1e-300)
        ct = np.rint(m[rows] / scale)
        c[rows] = ct
        s[rows] = scale
        nu[rows] = np.linalg.norm(m[rows] - scale * ct, axis=1).max()
        rho[rows] = np.linalg.norm(m[rows], axis=1).max()
    return s, c, nu, rho


def upper_bounds(rows, queries, tiled, room=0.0):
    """Each row's upper bound on rows . queries (rows x queries): the int8 approximation plus the
    Cauchy-Schwarz bound A_q nu + B_q rho (docs/batch.md, "8-bit tiles"), plus `room`."""
    if tiled:
        s_r, c_r, nu, rho = tiled_codes(rows)
    else:
        s_r, c_r, nu = codes(rows)
        rho = np.linalg.norm(rows, axis=1)
    s_q, c_q, b_q = codes(queries)
    a_q = s_q * np.linalg.norm(c_q, axis=1)
    return (c_r @ c_q.T) * s_r[:, None] * s_q[None, :] + nu[:, None] * a_q[None, :] + rho[:, None] * b_q[None, :] + room


def summary(counts):
    return {"median": float(np.median(counts)), "p90": float(np.percentile(counts, 90)), "max": int(counts.max()),
            "over_k_list": float((counts > K_LIST).mean())}


VARIANTS = ("plain", "centred", "projected52", "fp32_term")


def family_counts(x, n_queries, variants=VARIANTS, layouts=(False, True), room=0.0):
    """Per variant, the candidates of each query: rows whose upper bound on its exact similarity
    (each carrying `room` more) reaches the exact 10th best. layouts: False a scale a row, True the
    tiled copy's."""
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    idx = (np.arange(n_queries, dtype=np.int64) * 104729) % x.shape[0]
    q = xn[idx].astype(np.float64)
    exact = xn @ q.T
    kth = -np.partition(-exact, K_BEST - 1, axis=0)[K_BEST - 1]
    del exact
    mu = xn.mean(axis=0, dtype=np.float64)
    y = xn - mu.astype(xn.dtype)
    w = (q @ mu) / (mu @ mu)
    v = y @ mu
    qres = q - w[:, None] * mu
    shift = (q @ mu)[None, :]
    ups = {  # each computed when counted: a model of millions of rows holds one at a time
        "plain": lambda tiled: upper_bounds(xn, q, tiled, room),
        "centred": lambda tiled: upper_bounds(y, q, tiled, room) + shift,
        "projected52": lambda tiled: upper_bounds(
            np.hstack([y, np.repeat(v[:, None].astype(y.dtype), EXTRA, axis=1)]),
            np.hstack([qres, np.repeat((w / EXTRA)[:, None], EXTRA, axis=1)]), tiled, room) + shift,
        "fp32_term": lambda tiled: upper_bounds(y, qres, tiled, room) + v[:, None] * w[None, :] + shift}
    out = {}
    for tiled in layouts:
        for name in variants:
            out[("tiled_" if tiled else "") + name] = summary((ups[name](tiled) >= kth[None, :]).sum(axis=0))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="FAMILY=MODEL (.dsv or word2vec binary)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--out", required=True)
    ap.add_argument("--large", action="store_true",
                    help="millions of rows: float32 rows, the tiled copy's projected52 and fp32_term only")
    ap.add_argument("--room", type=float, nargs="+",
                    help="count each family once per value, every bound carrying that much more")
    a = ap.parse_args(argv)
    result = {"k": K_BEST, "k_list": K_LIST, "extra": EXTRA, "queries": a.queries, "families": {}}
    if a.room:
        result["rooms"] = a.room
    for spec in a.models:
        if "=" not in spec:
            print(f"projected_bound: error: '{spec}' is not FAMILY=MODEL", file=sys.stderr)
            return 2
        fam, path = spec.split("=", 1)
        x = load_rows(path)
        if a.large:
            x = x.astype(np.float32)
        for room in a.room or [0.0]:
            name = f"{fam}, room {room:.3g}" if a.room else fam
            if a.large:
                counts = family_counts(x, a.queries, ("projected52", "fp32_term"), (True,), room)
            else:
                counts = family_counts(x, a.queries, room=room)
            result["families"][name] = {"rows": int(x.shape[0]), "dim": int(x.shape[1]), **counts}
            print(f"projected_bound: {name}: " + ", ".join(f"{n} {v['median']:.0f}/{v['p90']:.0f}"
                                                           for n, v in result["families"][name].items()
                                                           if isinstance(v, dict)), file=sys.stderr)
        del x
    atomic_write.write_text(a.out, json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
