"""The fp64 oracle for an analogy batch, against the answers of every pipeline that ran it.

For each line `b - a + c` of the batch (made by `analogy.py make`), the query is the float32 sum
of the signed rows in the order written (as `distancies` forms it), and the oracle's top-1 is the
row of highest cosine similarity computed in fp64 (norms recomputed in fp64; a zero row scores 0),
the expression's words excluded, ties to the lower row. Each RESULTS file is the `--json -k 1`
output of `distancies query --batch` for one pipeline (its rows are in the loaded model's order, so
the answers are compared as words); the report says, per pipeline, how many top-1 words equal the
oracle's, its fallbacks and device time, and writes one JSON object.

    python -m scripts.analysis.analogy_oracle MODEL.bin BATCH.txt RESULTS.jsonl... --out check.json
"""
import argparse
import sys

import numpy as np

from scripts.analysis.analogy import read_results  # the answers' reader
from scripts.lib.atomic_write import write_json
from scripts.lib.w2v_binary import read_w2v


def fail(msg):
    raise SystemExit(f"analogy_oracle.py: error: {msg}")


def load_w2v_words(path):
    """(words, float32 rows) of a word2vec binary file; one error line if it is not one."""
    try:
        return read_w2v(path)
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except ValueError as e:
        fail(f"{path}: {e}")


def parse_terms(line):
    """'b - a + c' -> [(+1, 'b'), (-1, 'a'), (+1, 'c')]."""
    tokens = line.split()
    if not tokens or len(tokens) % 2 == 0:
        fail(f"batch line {line!r}: not words joined by + and -")
    terms = [(1, tokens[0])]
    for op, word in zip(tokens[1::2], tokens[2::2], strict=True):
        if op not in "+-" or len(op) != 1:
            fail(f"batch line {line!r}: '{op}' is not + or -")
        terms.append((1 if op == "+" else -1, word))
    return terms


def oracle_top1(vecs, queries, excluded, block=256):
    """Per query: (row, sim, second sim) of the fp64 top-1 with its excluded rows left out."""
    v64 = vecs.astype(np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", v64, v64))
    inv = np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)
    out = []
    for s in range(0, len(queries), block):
        q = queries[s:s + block].astype(np.float64)
        qn = np.sqrt(np.einsum("ij,ij->i", q, q))
        sims = (q @ v64.T) * inv[None, :] / qn[:, None]
        for j, rows in enumerate(excluded[s:s + block]):
            sims[j, rows] = -np.inf
        best = np.argmax(sims, axis=1)  # the first maximum: ties go to the lower row
        top = sims[np.arange(len(best)), best]
        sims[np.arange(len(best)), best] = -np.inf
        second = sims.max(axis=1)
        out.extend(zip(best.tolist(), top.tolist(), second.tolist(), strict=True))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", help="word2vec binary model the batch ran on")
    ap.add_argument("batch", help="the batch file (one expression a line)")
    ap.add_argument("results", nargs="+", help="`distancies query --batch --json -k 1` output, one file a pipeline")
    ap.add_argument("--out", required=True, help="JSON report to write")
    ap.add_argument("--context", action="append", default=[], metavar="KEY=VALUE",
                    help="recorded in the report's context (the GPU, driver, clocks, commit of the run)")
    a = ap.parse_args(argv)
    context = {}
    for kv in a.context:
        key, eq, value = kv.partition("=")
        if not eq or not key:
            fail(f"--context {kv!r}: KEY=VALUE expected")
        context[key] = value
    words, vecs = load_w2v_words(a.model)
    row_of = {}
    for i, w in enumerate(words):
        row_of.setdefault(w, i)
    try:
        with open(a.batch, encoding="utf-8") as f:
            lines = [t.strip() for t in f if t.strip()]
    except OSError as e:
        fail(f"{a.batch}: {e.strerror}")
    queries = np.zeros((len(lines), vecs.shape[1]), dtype=np.float32)
    excluded, known = [], []
    for i, line in enumerate(lines):
        terms = parse_terms(line)
        ok = all(w in row_of for _, w in terms)
        known.append(ok)
        rows = [row_of[w] for _, w in terms if w in row_of]
        for sign, w in terms:
            if w in row_of:
                queries[i] += np.float32(sign) * vecs[row_of[w]]  # float32, in the order written
        excluded.append(rows)
    oracle = oracle_top1(vecs, queries, excluded)
    report = {"context": context, "model": a.model, "batch": a.batch, "queries": len(lines),
              "unknown_words": sum(1 for k in known if not k), "pipelines": []}
    for path in a.results:
        answers, summary = read_results(path, len(lines))
        got = {line: word for line, (_, word, _) in answers.items()}  # None where it failed
        same, differ = 0, []
        for i in range(len(lines)):
            want = words[oracle[i][0]] if known[i] else None
            if got[i + 1] == want:
                same += 1
            elif len(differ) < 20:
                differ.append({"line": i + 1, "query": lines[i], "got": got[i + 1], "oracle": want,
                               "oracle_sim": oracle[i][1], "oracle_second": oracle[i][2]})
        gpu = summary.get("gpu", {})
        entry = {"results": path, "pipeline": gpu.get("pipeline"), "chosen_by": gpu.get("chosen_by"),
                 "identical_to_oracle": same, "differ": len(lines) - same, "first_differences": differ,
                 "fallbacks": summary.get("fallbacks"),
                 "fallback_rate": (summary.get("fallbacks") or 0) / len(lines),
                 "total_ms": gpu.get("total_ms"), "kernel_ms": gpu.get("kernel_ms"), "wall_ms": summary.get("wall_ms")}
        report["pipelines"].append(entry)
        print(f"{path}: {entry['pipeline']}: {same} / {len(lines)} top-1 words equal the fp64 oracle's, "
              f"{entry['fallbacks']} fallbacks, {entry['total_ms']:.2f} ms on the device")
    ties = sum(1 for i, (r, s1, s2) in enumerate(oracle) if known[i] and s1 == s2)
    report["oracle_ties_at_top1"] = ties
    write_json(a.out, report, indent=1)
    return 0 if all(p["differ"] == 0 for p in report["pipelines"]) else 1


if __name__ == "__main__":
    sys.exit(main())
