"""How often an 8-bit copy's certificate holds: int8 with per-row scales against FP8 e4m3.

    .venv/bin/python -m scripts.analysis.eight_bit_certification [--model M] [--queries N] [--out F]

A CPU emulation (numpy, float64 arithmetic on the copies' exact values; not the kernels' fp32
bits) of the one-query certificate on a real model: for an even sample of words as queries, the
K rows with the best keys are the candidates, their exact similarities give the k-th, and the
query is certified when that beats the K-th key plus the global bound E (docs/variants.md, "The
int8 copy"). k = 11 (ten words plus the query word itself, as test_range_guard's Certification
test asks) with the lists' K = 64, and k = 100 with the large-k select's K = 612.

- int8 (`fused_i8`): codes rint(x / s), s = max |x| / 127; keys carry the row's own bound
  s F / n; E from reduced_error_bound(Storage::I8), ported below.
- e4m3: x / s rounded to FP8 e4m3 (ml_dtypes, round to nearest), s = max |x| / 448. Its
  relative error is 2^-4 per element, so by Cauchy-Schwarz the storage term of E is 2^-4 (a
  per-row key cannot hold it without a second dot product over |q| and |x~|); the subnormal part
  (2^-10 s per element) goes into the row's key like int8's.
Writes one JSON object: the model, the sample, and per copy and k the certified fraction.

`batch_tensor_core`: the same for the copies a batched tensor-core scan would multiply (issue 15,
item 2), where the query is 8-bit too (int8 with its own scale, or e4m3): each score's key is
its approximation plus a bound with a per-row and a per-query part (bound_int8_batch,
bound_e4m3_batch below; docs/batch.md, "8-bit tiles"), and a query is certified when its k-th
exact similarity among the K best keys beats the K-th key. Also the candidates a filter pass
would append per query at K = 64 with the best threshold it could know (the K-th largest lower
key), against a 16-bit filter's at E = 1.1e-3 (`fp16_reference`).
"""
import argparse
import json
import math
import os
import sys

import numpy as np

from scripts.lib.w2v_binary import read_w2v

EPS = 2.0 ** -24
# The 16-bit filter's E at D = 50 on GloVe 6B (scripts/analysis/filter_candidates.py's default): the
# reference the 8-bit candidate counts are set against.
FP16_BOUND = 1.1e-3


def load_w2v(path):
    """The float32 rows of a word2vec binary file."""
    return read_w2v(path)[1]


def int8_codes(x):
    """Per-row int8 codes (float64) and scales of rows x, s = max |x| / 127 (the copy's rule)."""
    m = np.abs(x).max(axis=1).astype(np.float32)
    s = (m / np.float32(127)).astype(np.float32)
    safe = np.where(s > 0, s, 1).astype(np.float32)
    codes = np.clip(np.rint(x / safe[:, None]), -127, 127)
    codes[s == 0] = 0
    return codes.astype(np.float64), s.astype(np.float64)


def e4m3_codes(x):
    """Per-row e4m3 values (float64, before the scale) and scales, s = max |x| / 448."""
    import ml_dtypes
    m = np.abs(x).max(axis=1).astype(np.float32)
    s = (m / np.float32(448)).astype(np.float32)
    safe = np.where(s > 0, s, 1).astype(np.float32)
    y = (x / safe[:, None]).astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    y[s == 0] = 0
    return y, s.astype(np.float64)


def int8_copy(x):
    """The decoded int8 copy s c (float64) and its scales."""
    codes, s = int8_codes(x)
    return codes * s[:, None], s


def e4m3_copy(x):
    """The decoded e4m3 copy s e (float64) and its scales."""
    values, s = e4m3_codes(x)
    return values * s[:, None], s


def split_query(q):
    """The int8 scan's split: q~ = s_q (hi + lo / 254)."""
    s_q = np.float32(np.abs(q).max()) / np.float32(127)
    t = q / s_q
    hi = np.clip(np.rint(t), -127, 127)
    lo = np.clip(np.rint(np.float32(254) * (t - hi)), -127, 127)
    return float(s_q) * (hi.astype(np.float64) + lo.astype(np.float64) / 254.0), float(s_q)


def gamma(dim):
    return (dim + 5) * EPS / (1 - (dim + 5) * EPS)


def bound_int8(dim, q, qn):
    """reduced_error_bound(Storage::I8, ...) without the subnormal term (negligible here)."""
    root = math.sqrt(dim)
    s_q = float(np.abs(q).max()) / 127.0 * (1 + 2 * EPS)
    grow = 1 + root / 254.0
    split = root * s_q * (1.0 / 508 + 2.0 ** -20) * grow / qn
    steps = 8 * EPS * (1 + root * s_q / qn) * grow * (1 + EPS)
    return (split + steps + gamma(dim) + 16 * EPS) * (1 + 1e-6)


def bound_e4m3(dim):
    u = 2.0 ** -4
    return (u * (1 + gamma(dim)) + 2 * gamma(dim) * (1 + u) + 16 * EPS) * (1 + 1e-6)


# The batch tensor-core copies (issue 15, item 2): the queries are 8-bit too (one MMA a k-step,
# no hi/lo split), so each score's error has a row part and a query part. With q the normalised
# query (|q| = 1), x a row, s its scale, c its codes (x ~ s c, |x_j - s c_j| <= s (1/2 + 2^-16),
# the 2^-16 for fp32's rounding of x_j / s), and likewise s_q, c_q for the query:
#   |q.x - s_q s c_q.c| <= s (1/2 + 2^-16) (|q|_1 + s_q |c|_1)
# (sum |q_j||x_j - s c_j| + sum |s c_j||q_j - s_q c_qj|); divided by |x| for the cosine, plus the
# fp32 roundings of the scales' products and the dimension's gamma. The integer dot is exact.
def bound_int8_batch(dim, s_row, codes_l1, norm, q_l1, s_q):
    half = 0.5 + 2.0 ** -16
    return (s_row * half * (q_l1 + s_q * codes_l1) / norm + gamma(dim) + 16 * EPS) * (1 + 1e-6)


# e4m3 for both: |v_j - s e_j| <= 2^-4 |v_j| + s 2^-10 (3-bit mantissa; half the smallest
# subnormal 2^-9), so with the decoded row x~ = s e and query q~:
#   |q.x - q~.x~| <= 2^-4 (|x| + |x~|) + s 2^-10 |q|_1 + s_q 2^-10 |x~|_1     (Cauchy-Schwarz, |q| = 1)
# per row and query. It assumes fp32 accumulation, which Hopper's FP8 wgmma does not promise:
# the emulation favours e4m3.
def bound_e4m3_batch(dim, s_row, dec_norm, dec_l1, norm, q_l1, s_q):
    u, sub = 2.0 ** -4, 2.0 ** -10
    return (((u * (norm + dec_norm) + s_row * sub * q_l1 + s_q * sub * dec_l1) / norm + gamma(dim) + 16 * EPS)
            * (1 + 1e-6))


def batch_int8_keys(qh, c8, sc8, c8_l1, norm, dim):
    """(approximate cosines, their bounds) of the normalised fp32 query qh against every row of
    the int8 batch copy (codes c8, scales sc8, code L1 norms c8_l1; norm: the rows' norms, 1 for
    zero rows)."""
    cq, sq = int8_codes(qh[None, :])
    approx = sq[0] * sc8 * (c8 @ cq[0]) / norm
    return approx, bound_int8_batch(dim, sc8, c8_l1, norm, float(np.abs(qh.astype(np.float64)).sum()), sq[0])


def batch_e4m3_keys(qh, dec, se8, dec_norm, dec_l1, norm, dim):
    """The same for the e4m3 batch copy (dec: the decoded rows s e)."""
    eq, seq = e4m3_codes(qh[None, :])
    approx = (dec @ (eq[0] * seq[0])) / norm
    q_l1 = float(np.abs(qh.astype(np.float64)).sum())
    return approx, bound_e4m3_batch(dim, se8, dec_norm, dec_l1, norm, q_l1, seq[0])


def candidates_at_ideal_threshold(upper, lower, K):
    """Rows a filter would keep with the best threshold it can know: the K-th largest lower key."""
    t = np.partition(lower, len(lower) - K)[len(lower) - K]
    return int((upper >= t).sum())


def certify(exact, keys, k, K, E):
    cand = np.argpartition(-keys, K - 1)[:K]
    kth_key = keys[cand].min()
    kth_exact = np.partition(exact[cand], len(cand) - k)[len(cand) - k]
    return kth_exact > kth_key + E


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=os.path.join(root, ".cache", "models", "glove.6B.50d.w2v.bin"))
    ap.add_argument("--queries", type=int, default=10000, help="an even sample of the rows (0: every row)")
    ap.add_argument("--out", default="-")
    a = ap.parse_args()
    try:
        x = load_w2v(a.model)
    except OSError as e:
        sys.exit(f"eight_bit_certification: cannot read {a.model}: {e} (scripts/fetch_glove.sh fetches it)")
    rows, dim = x.shape
    norms = np.sqrt((x.astype(np.float64) ** 2).sum(axis=1))
    x64 = x.astype(np.float64)
    i8, s8 = int8_copy(x)
    f8, sf8 = e4m3_copy(x)
    n_q = rows if a.queries <= 0 else min(rows, a.queries)
    stride = max(1, rows // n_q)
    sample = np.arange(0, rows, stride)[:n_q]
    cases = [(11, 64), (100, 612)]
    counts = {c: {f"k{k}": 0 for k, _ in cases} for c in ("int8", "e4m3")}
    # The batch copies: codes, scales, and the per-row terms of their bounds.
    c8, sc8 = int8_codes(x)
    c8_l1 = np.abs(c8).sum(axis=1)
    e8, se8 = e4m3_codes(x)
    dec = e8 * se8[:, None]
    dec_norm, dec_l1 = np.sqrt((dec ** 2).sum(axis=1)), np.abs(dec).sum(axis=1)
    batch_counts = {c: {f"k{k}": 0 for k, _ in cases} for c in ("int8", "e4m3")}
    batch_E = {"int8": [], "e4m3": []}
    batch_cand = {"int8": [], "e4m3": [], "fp16_reference": []}
    Es = {"int8": [], "e4m3": bound_e4m3(dim)}
    safe_n = np.where(norms > 0, norms, 1.0)
    chunk = 64
    for first in range(0, len(sample), chunk):
        qs = x[sample[first:first + chunk]]
        exact = qs.astype(np.float64) @ x64.T
        approx8 = np.stack([split_query(q)[0] for q in qs]) @ i8.T
        approxf = qs.astype(np.float64) @ f8.T
        for b, q in enumerate(qs):
            qn = float(np.sqrt((q.astype(np.float64) ** 2).sum()))
            l1 = float(np.abs(q.astype(np.float64)).sum())
            ex = exact[b] / (qn * safe_n)
            factor = l1 / (2 * qn) * (1 + 2.0 ** -10)
            key8 = approx8[b] / (qn * safe_n) + s8 * factor / safe_n
            E8 = bound_int8(dim, q, qn)
            Es["int8"].append(E8)
            keyf = approxf[b] / (qn * safe_n) + sf8 * 2.0 ** -10 * l1 / (qn * safe_n) * (1 + 2.0 ** -10)
            for k, K in cases:
                counts["int8"][f"k{k}"] += bool(certify(ex, key8, k, K, E8))
                counts["e4m3"][f"k{k}"] += bool(certify(ex, keyf, k, K, Es["e4m3"]))
            # The batch copies: the query normalised, then 8-bit itself.
            qh = (q.astype(np.float64) / qn).astype(np.float32)
            for name, (approx, E) in (("int8", batch_int8_keys(qh, c8, sc8, c8_l1, safe_n, dim)),
                                      ("e4m3", batch_e4m3_keys(qh, dec, se8, dec_norm, dec_l1, safe_n, dim))):
                batch_E[name].append(float(np.median(E)))
                batch_cand[name].append(candidates_at_ideal_threshold(approx + E, approx - E, 64))
                for k, K in cases:
                    batch_counts[name][f"k{k}"] += bool(certify(ex, approx + E, k, K, 0.0))
            batch_cand["fp16_reference"].append(candidates_at_ideal_threshold(ex + FP16_BOUND, ex - FP16_BOUND, 64))
        print(f"\r{min(first + chunk, len(sample))}/{len(sample)} queries", end="", file=sys.stderr)
    print(file=sys.stderr)
    out = {
        "what": "CPU emulation of the 8-bit certificates (scripts/analysis/eight_bit_certification.py)",
        "model": os.path.basename(a.model), "rows": rows, "dim": dim, "queries": len(sample),
        "cases": [{"k": k, "K": K} for k, K in cases],
        "global_bound": {"int8_median": float(np.median(Es["int8"])), "e4m3": Es["e4m3"]},
        "certified_fraction": {c: {kk: v / len(sample) for kk, v in d.items()} for c, d in counts.items()},
        "batch_tensor_core": {
            "what": "both operands 8-bit (one MMA a k-step): keys = approx + the per-row-and-query bound",
            "certified_fraction": {c: {kk: v / len(sample) for kk, v in d.items()} for c, d in batch_counts.items()},
            "bound_median": {c: float(np.median(v)) for c, v in batch_E.items()},
            "candidates_K64": {c: {"median": float(np.median(v)), "p99": float(np.percentile(v, 99)),
                                   "max": int(max(v))} for c, v in batch_cand.items()},
            "fp16_reference_bound": FP16_BOUND,
        },
    }
    text = json.dumps(out, indent=2)
    if a.out == "-":
        print(text)
    else:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
