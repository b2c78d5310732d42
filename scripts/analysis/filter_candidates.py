"""How many candidates `batch_f16_filter`'s seeded threshold lets through, against its buffer.

    .venv/bin/python -m scripts.analysis.filter_candidates MODEL [--queries N] [--k K] [--out F]

A CPU emulation (numpy, fp32 cosines; not the kernel's fp16 operands, whose keys differ by at
most E) of the filtered scan's plan (variants/embeddings/filter_scan.cu, docs/batch.md): the
sample is `want` = max(ceil(K/16), ceil(sqrt(K rows) / 16)) 16-row groups, every `stride`-th
(stride = rows // 16 // want), seeded only where rows >= 8 x 16 want; a query's threshold is its
K-th best sampled cosine less 2E(1 + 2^-20); its candidates are the rows at or above it; the
buffer holds min(rows, max(sample, 4 ceil(K rows / sample) + 1024)). For an even sample of the
model's rows as queries (query rows r = i x 104729 mod rows, the fixtures' rule) it reports the
candidates' median, 99th percentile and largest, as a count and as a share of the buffer, and
the queries that would overflow (those go to the fallback). E is gemm_error_bound for fp16 at
this dimension and the model's smallest norm, taken as 1.1e-3 by default (--bound): the margin
moves the counts by a few per cent at most.

Reads the native format (`distancies gen` writes the synthetic model; docs/formats.md) or
word2vec binary. Writes one JSON object.
"""
import argparse
import json
import math
import os
import sys

import numpy as np

from scripts.analysis.eight_bit_certification import load_w2v
from scripts.peers.peer_torch import load_native


def plan(rows, K, seed_ratio=8, factor=4):
    """(sample rows, capacity), mirroring sample_for and filter_scan_capacity; sample None: no seed."""
    want = max(-(-K // 16), math.ceil(math.sqrt(K * rows) / 16))
    if rows < seed_ratio * want * 16:
        return None, max(rows, 1)
    stride = rows // 16 // want
    sample = (np.arange(want)[:, None] * stride * 16 + np.arange(16)[None, :]).ravel()
    expected = -(-(K * rows) // len(sample))
    return sample, min(rows, max(len(sample), factor * expected + 1024))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--k", type=int, default=10, help="results a query asks for; K = max(64, 2k) <= 128")
    ap.add_argument("--bound", type=float, default=1.1e-3, help="E, the fp16 batch bound")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.model.endswith(".bin"):
        vectors = load_w2v(a.model)
    else:
        _, _, vectors = load_native(a.model)
    rows, dim = vectors.shape
    K = min(128, max(64, 2 * a.k))
    sample, capacity = plan(rows, K)
    if sample is None:
        sys.exit(f"filter_candidates: {rows} rows are too few to seed: every row is a candidate")
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(x.astype(np.float64), axis=1).astype(np.float32)
    inv = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1), 0).astype(np.float32)
    qrows = (np.arange(a.queries, dtype=np.int64) * 104729) % rows
    margin = 2 * a.bound * (1 + 2.0 ** -20)
    counts = []
    for start in range(0, len(qrows), 64):
        q = x[qrows[start:start + 64]]
        q = q / np.linalg.norm(q, axis=1, keepdims=True)
        sims = (x @ q.T) * inv[:, None]                     # rows x queries, fp32
        kth = -np.partition(-sims[sample], K - 1, axis=0)[K - 1]
        counts.extend((sims >= (kth - margin)[None, :]).sum(axis=0).tolist())
    counts = np.array(counts)
    share = counts / capacity
    out = {"model": os.path.basename(a.model), "rows": int(rows), "dim": int(dim), "k": a.k, "K": K,
           "queries": int(len(counts)), "sample_rows": int(len(sample)), "capacity": int(capacity),
           "expected": int(-(-(K * rows) // len(sample))), "bound": a.bound,
           "candidates": {"median": float(np.median(counts)), "p99": float(np.percentile(counts, 99)),
                          "max": int(counts.max())},
           "share_of_capacity": {"median": float(np.median(share)), "p99": float(np.percentile(share, 99)),
                                 "max": float(share.max())},
           "overflowing_queries": int((counts > capacity).sum())}
    text = json.dumps(out, indent=1)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
