"""Every word of a model as a query, against the fp64 oracle.

`words` writes each word of a word2vec binary model on a line of its own (a batch file: every
line a word of the vocabulary, `#`, `"`, `-`, `+` and `!` included). `check` reads the `--json`
output of `distancies query --batch WORDS --json -k K` for one or more pipelines and holds each
line's answer against the fp64 oracle: the K rows of highest cosine with the word's own row
(norms in fp64; a zero row scores 0), the word itself excluded (as the CLI drops query words),
ties to the lower row of the model as `distancies` loads it (words sorted byte-wise). An answer
is `exact` when its words are the oracle's in order, and `near_tie` when every difference is
between rows whose fp64 similarities differ by at most 1e-6 (fp32 rounding can order those
either way). The answers must also account for every line: one answer a line, its query that
line's word, and a summary with lines = queries = answered = the word count (nothing skipped as a
comment or refused as an expression). Uses PyTorch on the GPU when it is there (400,000 x 400,000 fp64 scores), NumPy
otherwise.

    python -m scripts.analysis.every_word words MODEL.bin WORDS.txt
    python -m scripts.analysis.every_word check MODEL.bin WORDS.txt RESULTS.jsonl... -k 10 --out check.json
"""
import argparse
import json
import sys

import numpy as np

from scripts.lib import atomic_write
from scripts.lib.w2v_binary import read_w2v

NEAR_TIE = 1e-6


def fail(msg):
    raise SystemExit(f"every_word: error: {msg}")


def load(path):
    try:
        words, vecs = read_w2v(path)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    order = sorted(range(len(words)), key=lambda i: words[i].encode("utf-8"))  # distancies' rows
    return [words[i] for i in order], np.asarray(vecs, dtype=np.float32)[order]


def oracle_topk(vecs, k, block=1024):
    """(rows[n, k], sims[n, k]) of each row's k best other rows, fp64, ties to the lower row."""
    try:
        import torch
        dev = "cuda" if torch.cuda.is_available() else None
    except ImportError:
        dev = None
    if dev:
        x = torch.from_numpy(vecs).to(dev, torch.float64)
        n = torch.linalg.norm(x, dim=1)
        xn = x / torch.where(n > 0, n, torch.ones_like(n))[:, None]
        rows, sims = [], []
        for s in range(0, x.shape[0], block):
            c = xn[s:s + block] @ xn.T
            c[torch.arange(c.shape[0], device=dev), torch.arange(s, s + c.shape[0], device=dev)] = -torch.inf
            # top k + 8, then sorted by (-sim, row): equal similarities go to the lower row
            v, i = torch.topk(c, k + 8, dim=1)
            v, i = v.cpu().numpy(), i.cpu().numpy()
            order = np.lexsort((i, -v), axis=1)
            i, v = np.take_along_axis(i, order, 1), np.take_along_axis(v, order, 1)
            rows.append(i[:, :k])
            sims.append(v[:, :k])
        return np.concatenate(rows), np.concatenate(sims)
    x = vecs.astype(np.float64)
    n = np.linalg.norm(x, axis=1)
    xn = x / np.where(n > 0, n, 1.0)[:, None]
    rows, sims = [], []
    for s in range(0, x.shape[0], block):
        c = xn[s:s + block] @ xn.T
        c[np.arange(c.shape[0]), np.arange(s, s + c.shape[0])] = -np.inf
        order = np.lexsort((np.broadcast_to(np.arange(c.shape[1]), c.shape), -c), axis=1)[:, :k]
        rows.append(order)
        sims.append(np.take_along_axis(c, order, 1))
    return np.concatenate(rows), np.concatenate(sims)


def sims_of(vecs, q, r):
    """fp64 cosine of row q with row r."""
    a, b = vecs[q].astype(np.float64), vecs[r].astype(np.float64)
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return 0.0 if na == 0 or nb == 0 else float(a @ b / (na * nb))


def read_answers(path, n_lines):
    answers, summary = {}, None
    with open(path, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as e:
                fail(f"{path}:{n}: not JSON ({e.msg})")
            if "summary" in obj:
                summary = obj["summary"]
            elif isinstance(obj.get("line"), int) and 1 <= obj["line"] <= n_lines:
                answers[obj["line"]] = obj
            else:
                fail(f"{path}:{n}: no batch line number in 1..{n_lines}")
    if summary is None:
        fail(f"{path}: no final summary line (output cut short?)")
    return answers, summary


def check_one(path, words, vecs, rows, sims, k):
    index = {w: i for i, w in enumerate(words)}
    answers, summary = read_answers(path, len(words))
    exact = near = wrong = errors = 0
    shown = []
    for line, q in enumerate(range(len(words)), 1):
        a = answers.get(line)
        if a is None or "error" in a:
            errors += 1
            continue
        got = [index.get(h.get("word"), -1) for h in a.get("results", [])]
        want = list(rows[q][:k])
        if got == want:
            exact += 1
        elif len(got) == len(want) and all(g == w or (g >= 0 and abs(sims_of(vecs, q, g) - s) <= NEAR_TIE)
                                           for g, w, s in zip(got, want, sims[q][:k], strict=True)):
            near += 1
        else:
            wrong += 1
            if len(shown) < 5:
                shown.append({"line": line, "word": words[q], "got": [words[g] if g >= 0 else None for g in got],
                              "oracle": [words[w] for w in want]})
    misread = sum(1 for line, a in answers.items() if a.get("query") != words[line - 1])
    n = len(words)
    counted = all(summary.get(f) == n for f in ("lines", "queries", "answered")) and summary.get("failed") == 0
    return {"results": path, "lines": n, "answered": n - errors, "errors": errors, "misread": misread,
            "summary_counts_every_line": counted, "exact": exact, "near_tie": near, "wrong": wrong,
            "examples": shown, "summary": summary}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("words")
    w.add_argument("model")
    w.add_argument("out")
    c = sub.add_parser("check")
    c.add_argument("model")
    c.add_argument("words")
    c.add_argument("results", nargs="+")
    c.add_argument("-k", type=int, default=10)
    c.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    words, vecs = load(args.model)
    if args.cmd == "words":
        if any("\n" in x or "\r" in x for x in words):
            fail("a word holds a line break: it cannot be a line of a batch file")
        atomic_write.write_text(args.out, "".join(x + "\n" for x in words))
        print(f"every_word: {len(words)} words -> {args.out}", file=sys.stderr)
        return 0
    with open(args.words, encoding="utf-8") as f:
        listed = f.read().split("\n")[:-1]
    if listed != words:
        fail(f"{args.words} is not the model's words one a line in distancies' order (run `words` first)")
    rows, sims = oracle_topk(vecs, args.k)
    report = {"model": args.model, "k": args.k, "pipelines": [check_one(p, words, vecs, rows, sims, args.k)
                                                             for p in args.results]}
    atomic_write.write_json(args.out, report, indent=1)
    for p in report["pipelines"]:
        print(f"{p['results']}: {p['answered']}/{p['lines']} answered, {p['exact']} exact, "
              f"{p['near_tie']} near-tie, {p['wrong']} wrong, {p['misread']} misread; summary "
              f"{'counts every line' if p['summary_counts_every_line'] else 'does NOT count every line'}")
    ok = all(p["wrong"] == 0 and p["errors"] == 0 and p["misread"] == 0 and p["summary_counts_every_line"]
             for p in report["pipelines"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
