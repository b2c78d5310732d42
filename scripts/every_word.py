#!/usr/bin/env python3
"""Every word of a word2vec binary model asked once: write the word list, then check the answers.

    python scripts/every_word.py words .cache/models/glove.6B.50d.w2v.bin all_words.txt
    distancies query --model .cache/models/glove.6B.50d.w2v.bin --batch all_words.txt --json -k 10 > all_words.jsonl
    python scripts/every_word.py check all_words.txt all_words.jsonl

`check` passes when every line has exactly one answer whose query is that line's word and the
summary says lines = queries = answered = line count, nothing skipped or failed.
"""
import json
import sys


def words_of(path):
    with open(path, "rb") as f:
        rows, dim = map(int, f.readline().split())
        for _ in range(rows):
            w = bytearray()
            while True:
                c = f.read(1)
                if not c:
                    sys.exit(f"{path}: ends inside a word")
                if c == b" ":
                    break
                if c in b"\n\r" and not w:
                    continue  # the newline after the previous row
                w += c
            f.seek(4 * dim, 1)
            yield w.decode("utf-8", "replace")


def write(model, out):
    n = 0
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for w in words_of(model):
            if "\n" in w or "\r" in w:
                sys.exit(f"word {w!r} cannot be one line of a batch file")
            f.write(w + "\n")
            n += 1
    print(f"{out}: {n} words")


def check(words_path, answers_path):
    with open(words_path, encoding="utf-8", newline="\n") as f:
        words = f.read().split("\n")[:-1]
    seen, summary, bad = {}, None, []
    with open(answers_path, encoding="utf-8") as f:
        for raw in f:
            obj = json.loads(raw)
            if "summary" in obj:
                summary = obj["summary"]
                continue
            line = obj["line"]
            if line in seen or "error" in obj or obj["query"] != words[line - 1]:
                bad.append(obj)
            seen[line] = obj
    n = len(words)
    missing = [i for i in range(1, n + 1) if i not in seen]
    print(f"{n} lines, {len(seen)} answers, {len(missing)} missing, {len(bad)} wrong; summary {summary}")
    for obj in bad[:10]:
        print("wrong:", json.dumps(obj)[:200])
    for i in missing[:10]:
        print(f"missing: line {i} {words[i - 1]!r}")
    ok = (not missing and not bad and summary is not None and summary["lines"] == n
          and summary["queries"] == n and summary["answered"] == n and summary["failed"] == 0)
    print("every word ok" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("words", "check"):
        sys.exit(__doc__)
    sys.exit(write(sys.argv[2], sys.argv[3]) if sys.argv[1] == "words" else check(sys.argv[2], sys.argv[3]))
