"""Shared parts of the batch peers (peer_torch_batch.py, peer_faiss.py): the model, the query rule,
the fp64 oracle and the Google Benchmark-shaped JSON. Not a command; the peers import it.

Query b of a batch is the vector of model row (b * 104729) % rows, the rule of the C++ batch
benchmark. Cosine similarity: rows divided by their stored norms (zero rows: similarity 0), queries
normalised. No words are excluded: a query's own row is normally its first result.
"""
import json
import math
import statistics
import struct
import time

import numpy as np

from scripts.lib import atomic_write
from scripts.peers.peer_torch import load_native

QUERY_STRIDE = 104729
CHECKED = 32            # queries of each batch compared with the oracle


def parse_batches(text, prog):
    """'1,16,128' -> [1, 16, 128]; SystemExit with one line on anything else."""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) < 1:
            raise SystemExit(f"{prog}: --batches: {part!r} is not a positive integer (expected e.g. 1,16,128)")
        out.append(int(part))
    return out


def query_rows(batch, rows):
    """Model rows of the queries of a batch of `batch`: (b * 104729) % rows, int64."""
    return (np.arange(batch, dtype=np.int64) * QUERY_STRIDE) % rows


def check_positions(batch, n=CHECKED):
    """Positions in the batch whose results are compared with the oracle: up to n, evenly spread."""
    return np.unique(np.linspace(0, batch - 1, min(n, batch)).round().astype(np.int64))


def load_model(path, prog):
    """(words, norms, vectors, normalised) of a native model; one-line SystemExit if unreadable."""
    try:
        with open(path, "rb") as f:
            head = f.read(16)
        words, norms, vectors = load_native(path)
    except OSError as e:
        raise SystemExit(f"{prog}: {path}: {e.strerror}") from None
    except SystemExit as e:
        raise SystemExit(str(e.code).replace("peer_torch:", f"{prog}:", 1)) from None
    except ValueError as e:     # sections that do not fit the file
        raise SystemExit(f"{prog}: {path}: malformed native model ({e})") from None
    normalised = bool(struct.unpack_from("<I", head, 12)[0] & 1)
    if len(words) == 0:
        raise SystemExit(f"{prog}: {path}: the model has no rows")
    return words, norms, vectors, normalised


def normalised_rows(vectors, norms, normalised):
    """float32 rows / stored norms (a model stored normalised is taken as it is; zero rows stay 0)."""
    x = np.array(vectors, dtype=np.float32)          # a copy, contiguous
    if not normalised:
        n = np.asarray(norms, dtype=np.float32)
        x /= np.where(n > 0, n, 1.0)[:, None]
    return x


def normalised_queries(q):
    """float32 queries / their norms (fp64 norms; a zero query stays 0)."""
    n = np.linalg.norm(q.astype(np.float64), axis=1)
    return (q / np.where(n > 0, n, 1.0)[:, None]).astype(np.float32)


def oracle_topk(vectors, queries, k, block=1 << 16):
    """fp64 cosine top k of each query over all rows, ordered by similarity desc then row asc.

    vectors: rows x dim (any float dtype, may be a strided view); queries: nq x dim.
    Norms are recomputed in fp64; zero rows and zero queries have similarity 0. Returns
    (rows int64 [nq, k], similarities float64 [nq, k]). Runs in row blocks: memory O(block * nq).
    """
    rows = vectors.shape[0]
    k = min(k, rows)
    q = np.asarray(queries, dtype=np.float64)
    qn = np.linalg.norm(q, axis=1)
    q = q / np.where(qn > 0, qn, 1.0)[:, None]
    nq = q.shape[0]
    cand_s = [[] for _ in range(nq)]
    cand_r = [[] for _ in range(nq)]
    for s in range(0, rows, block):
        x = np.asarray(vectors[s:s + block], dtype=np.float64)
        n = np.sqrt(np.einsum("ij,ij->i", x, x))
        sims = (q @ x.T) / np.where(n > 0, n, 1.0)[None, :]          # nq x block
        kk = min(k, sims.shape[1])
        thr = np.partition(sims, sims.shape[1] - kk, axis=1)[:, sims.shape[1] - kk]   # k-th largest
        for j in range(nq):
            sel = np.flatnonzero(sims[j] >= thr[j])                  # ties at the k-th kept
            cand_s[j].append(sims[j, sel])
            cand_r[j].append(sel + s)
    out_r = np.empty((nq, k), dtype=np.int64)
    out_s = np.empty((nq, k), dtype=np.float64)
    for j in range(nq):
        cs, cr = np.concatenate(cand_s[j]), np.concatenate(cand_r[j])
        order = np.lexsort((cr, -cs))[:k]
        out_r[j], out_s[j] = cr[order], cs[order]
    return out_r, out_s


def exact_fraction(got_rows, want_rows):
    """Fraction of queries whose returned row set equals the oracle's (order ignored)."""
    got, want = np.asarray(got_rows), np.asarray(want_rows)
    if len(got) == 0:
        return float("nan")
    same = [set(g.tolist()) == set(w.tolist()) for g, w in zip(got, want, strict=True)]
    return sum(same) / len(same)


class Oracle:
    """fp64 top k for the checked queries of every batch, computed once for all of them."""

    def __init__(self, vectors, batches, k):
        rows = vectors.shape[0]
        wanted = np.unique(np.concatenate([query_rows(b, rows)[check_positions(b)] for b in batches]))
        top, _ = oracle_topk(vectors, np.asarray(vectors[wanted], dtype=np.float32), k)
        self.by_row = {int(r): top[i] for i, r in enumerate(wanted)}
        self.rows = rows

    def fraction(self, batch, returned_rows):
        """returned_rows: [batch, k] rows a peer returned; compares the checked positions."""
        pos = check_positions(batch)
        qrows = query_rows(batch, self.rows)[pos]
        return exact_fraction(np.asarray(returned_rows)[pos], [self.by_row[int(r)] for r in qrows]), len(pos)


def entries(name, samples_ms, batch, rows, exact, checked, chunk):
    """Google Benchmark-shaped entries: one per sample (run_type iteration), then median and stddev."""
    def counters(ms):
        return {"total_ms": ms, "queries_per_s": batch / ms * 1e3 if ms > 0 else 0.0,
                "distances_per_ms": batch * rows / ms if ms > 0 else 0.0}

    fixed = {"batch": batch, "exact_fraction": exact, "exact_checked": checked, "chunk": chunk}
    run_name = f"{name}/batch:{batch}/manual_time"
    base = {"run_name": run_name, "repetitions": len(samples_ms), "threads": 1, "iterations": 1,
            "time_unit": "ms"}
    out = []
    for i, ms in enumerate(samples_ms):
        out.append({"name": run_name, "run_type": "iteration", "repetition_index": i, **base,
                    "real_time": ms, "cpu_time": ms, **counters(ms), **fixed})
    per = [counters(ms) for ms in samples_ms]
    med = float(np.median(samples_ms))
    medc = {m: float(np.median([c[m] for c in per])) for m in per[0]}
    out.append({"name": run_name + "_median", "run_type": "aggregate", "aggregate_name": "median", **base,
                "real_time": med, "cpu_time": med, **medc, **fixed, "samples_ms": list(samples_ms)})
    if len(samples_ms) > 1:
        sd = {m: statistics.stdev([c[m] for c in per]) for m in per[0]}
        out.append({"name": run_name + "_stddev", "run_type": "aggregate", "aggregate_name": "stddev", **base,
                    "real_time": sd["total_ms"], "cpu_time": sd["total_ms"], **sd, "batch": batch,
                    "chunk": chunk})
    return out


def default_reps(batch):
    """Timed repetitions for a batch size: fewer at large B (each then takes longer)."""
    return 20 if batch <= 128 else 10 if batch <= 1024 else 3


def write_json(path, context, benchmarks, prog):
    doc = {"context": {k: (v if isinstance(v, str) else json.dumps(v)) for k, v in context.items()},
           "benchmarks": benchmarks}
    try:
        # atomic_write's, not this function (the same name once made this call itself)
        atomic_write.write_json(path, doc, indent=1, allow_nan=True)
    except OSError as e:
        raise SystemExit(f"{prog}: {path}: {e.strerror}") from None


def largest_pow2_at_most(n):
    return 1 << int(math.floor(math.log2(n))) if n >= 1 else 0


def add_common_args(ap):
    """The arguments every batch peer takes: model, batch sizes, k, repetitions, output."""
    ap.add_argument("model", help="native model (distancies convert / gen)")
    ap.add_argument("--batches", default="1,16,128,1024,8192", help="batch sizes, comma-separated")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--reps", type=int, help="timed repetitions per batch (default 20 up to B=128, "
                                             "10 up to 1024, 3 above)")
    ap.add_argument("--out", required=True)


def load_model_and_oracle(args, batches, prog):
    """(norms, vectors, normalised, oracle): the model, k checked against its rows, and the fp64
    oracle for the checked queries of every batch (timed, one line)."""
    _, norms, vectors, normalised = load_model(args.model, prog)
    rows = vectors.shape[0]
    if args.k > rows:
        raise SystemExit(f"{prog}: -k {args.k} is more than the model's {rows} rows")
    t0 = time.perf_counter()
    oracle = Oracle(vectors, batches, args.k)
    print(f"{prog}: fp64 oracle for the checked queries in {time.perf_counter() - t0:.1f} s", flush=True)
    return norms, vectors, normalised, oracle
