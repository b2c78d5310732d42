"""Word analogies (the Google test set) as a distancies batch, and the accuracy of its answers.

`make` writes one expression `b - a + c` per question `a b c d` (its nearest word should be d) and
a sidecar BATCH.json with each line's section and expected answer; `score` reads the output of
`distancies query --batch BATCH --json -k 1` and reports the top-1 accuracy (overall, semantic,
syntactic, per section), writing SUMMARY.json and a table on stdout.

    python -m scripts.analysis.analogy make .cache/analogy/questions-words.txt --out analogy.txt --lowercase
    distancies query --model M --batch analogy.txt --json -k 1 > analogy.jsonl
    python -m scripts.analysis.analogy score analogy.txt analogy.jsonl --out analogy-summary.json
"""
import argparse
import json
import sys

from scripts.lib.atomic_write import write_json

FORMAT = "distancies-analogy-batch/1"
NO_SECTION = "(no section)"


def fail(msg):
    raise SystemExit(f"analogy.py: error: {msg}")


def read_lines(path):
    """The file's lines (UTF-8); one error line if it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        fail(f"{path}: {e.strerror if isinstance(e, OSError) else e}")


def read_questions(path, lowercase):
    """[(section, [a, b, c, d])] from a questions-words.txt file (': section' lines start a section)."""
    lines = read_lines(path)
    out, section = [], NO_SECTION
    for n, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        if text.startswith(":"):
            section = text[1:].strip()
            if not section:
                fail(f"{path}:{n}: empty section name")
            continue
        words = text.split()
        if len(words) != 4:
            fail(f"{path}:{n}: expected 4 words (a b c d) or ': section', found {len(words)}")
        if lowercase:
            words = [w.lower() for w in words]
        if any(w in ("+", "-") for w in words):
            fail(f"{path}:{n}: a word is '+' or '-', which a batch expression cannot hold")
        out.append((section, words))
    if not out:
        fail(f"{path}: no questions")
    return out


def expression(words):
    """a:b :: c:d -> the expression whose nearest word should be d."""
    a, b, c, _ = words
    return f"{b} - {a} + {c}"


def is_syntactic(section):
    return section.startswith("gram")


def make(args):
    questions = read_questions(args.questions, args.lowercase)
    sections = list(dict.fromkeys(s for s, _ in questions))
    items = [{"line": i, "section": s, "question": w, "query": expression(w), "expected": w[3]}
             for i, (s, w) in enumerate(questions, 1)]
    sidecar = {"format": FORMAT, "questions_file": args.questions, "lowercase": args.lowercase,
               "sections": sections, "semantic_sections": [s for s in sections if not is_syntactic(s)],
               "syntactic_sections": [s for s in sections if is_syntactic(s)], "items": items}
    try:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write("".join(it["query"] + "\n" for it in items))
        write_json(args.out + ".json", sidecar)
    except OSError as e:
        fail(f"{e.filename}: {e.strerror}")
    print(f"analogy.py: {len(items)} questions in {len(sections)} sections -> {args.out} (+ {args.out}.json)")


def load_sidecar(batch):
    path = batch + ".json"
    try:
        with open(path, encoding="utf-8") as f:
            side = json.load(f)
    except OSError as e:
        fail(f"{path}: {e.strerror} (made by `analogy.py make` beside the batch file)")
    except json.JSONDecodeError as e:
        fail(f"{path}: not JSON: {e}")
    if not isinstance(side, dict) or side.get("format") != FORMAT:
        fail(f"{path}: not an analogy sidecar (format {FORMAT!r} expected)")
    return side


def read_results(path, n_lines):
    """{line: (query, top-1 word or None, error or None)} and the final summary object."""
    lines = read_lines(path)
    got, summary = {}, None
    for n, text in enumerate(lines, 1):
        if not text.strip():
            continue
        if summary is not None:
            fail(f"{path}:{n}: output after the final summary line")
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            fail(f"{path}:{n}: not JSON ({e.msg})")
        if not isinstance(obj, dict):
            fail(f"{path}:{n}: expected a JSON object")
        if "summary" in obj:
            summary = obj["summary"]
            continue
        line = obj.get("line")
        if not isinstance(line, int) or isinstance(line, bool) or not 1 <= line <= n_lines:
            fail(f"{path}:{n}: 'line' must be a batch line number in 1..{n_lines}, found {line!r}")
        if line in got:
            fail(f"{path}:{n}: a second result for batch line {line}")
        if "error" in obj:
            got[line] = (obj.get("query"), None, str(obj["error"]))
        elif isinstance(obj.get("results"), list):
            res = obj["results"]
            if res and not (isinstance(res[0], dict) and isinstance(res[0].get("word"), str)):
                fail(f"{path}:{n}: results[0] has no 'word'")
            got[line] = (obj.get("query"), res[0]["word"] if res else None, None)
        else:
            fail(f"{path}:{n}: neither 'results' (a list) nor 'error'")
    if summary is None:
        fail(f"{path}: no final {{\"summary\": ...}} line (output cut short?)")
    missing = [i for i in range(1, n_lines + 1) if i not in got]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
        fail(f"{path}: no result for {len(missing)} of {n_lines} batch lines ({shown})")
    return got, summary


def stats(rows):
    """rows: [(answered, correct)] -> counts and both accuracies (None when undefined)."""
    total = len(rows)
    answered = sum(1 for a, _ in rows if a)
    correct = sum(1 for _, c in rows if c)
    return {"questions": total, "answered": answered, "skipped": total - answered, "correct": correct,
            "accuracy_answered": correct / answered if answered else None,
            "accuracy_all": correct / total if total else None}


def score(args):
    side = load_sidecar(args.batch)
    items = side["items"]
    got, run = read_results(args.results, len(items))
    per = []
    for it in items:
        query, word, error = got[it["line"]]
        if query is not None and query.split() != it["query"].split():
            fail(f"{args.results}: batch line {it['line']}: query {query!r} is not the batch's {it['query']!r}")
        per.append((it["section"], error is None, error is None and word == it["expected"]))
    sections = [{"section": s, **stats([(a, c) for sec, a, c in per if sec == s])} for s in side["sections"]]
    summary = {"batch": args.batch, "results": args.results, "questions_file": side.get("questions_file"),
               "lowercase": side.get("lowercase"),
               "overall": stats([(a, c) for _, a, c in per]),
               "semantic": stats([(a, c) for s, a, c in per if not is_syntactic(s)]),
               "syntactic": stats([(a, c) for s, a, c in per if is_syntactic(s)]),
               "sections": sections, "run": run}
    try:
        write_json(args.out, summary, indent=1)
    except OSError as e:
        fail(f"{args.out}: {e.strerror}")
    print(table(summary))


def table(summary):
    def pct(x):
        return "-" if x is None else f"{100 * x:.2f}%"

    width = max([len("syntactic")] + [len(s["section"]) for s in summary["sections"]])
    head = f"{'section':<{width}}  {'questions':>9}  {'answered':>8}  {'skipped':>7}  {'correct':>7}  " \
           f"{'acc(answered)':>13}  {'acc(all)':>8}"
    out = [head, "-" * len(head)]

    def row(name, s):
        out.append(f"{name:<{width}}  {s['questions']:>9}  {s['answered']:>8}  {s['skipped']:>7}  "
                   f"{s['correct']:>7}  {pct(s['accuracy_answered']):>13}  {pct(s['accuracy_all']):>8}")

    for s in summary["sections"]:
        row(s["section"], s)
    out.append("-" * len(head))
    for name in ("semantic", "syntactic", "overall"):
        row(name, summary[name])
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make", help="questions-words.txt -> batch file (+ BATCH.json)")
    m.add_argument("questions")
    m.add_argument("--out", required=True, help="batch file to write; the sidecar is OUT.json")
    m.add_argument("--lowercase", action="store_true", help="lowercase every word (GloVe 6B is lowercase)")
    s = sub.add_parser("score", help="distancies query --batch --json -k 1 output -> accuracy")
    s.add_argument("batch", help="batch file made by `make` (its sidecar BATCH.json is read)")
    s.add_argument("results", help="the stdout of distancies query --batch BATCH --json -k 1")
    s.add_argument("--out", required=True, help="summary JSON to write")
    args = ap.parse_args(argv)
    make(args) if args.cmd == "make" else score(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
