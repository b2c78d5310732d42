"""scripts/analysis/every_word.py on a small model with awkward words, on the CPU."""
import json

import numpy as np
import pytest

from scripts.analysis import every_word as ewo

WORDS = ["king", "#", "#tag", '"', "-", "+", "!", "queen", "0", "man", "woman", "zz", "aa", "copy", "copy2"]


def write_w2v(path, words, vecs):
    with open(path, "wb") as f:
        f.write(f"{len(words)} {vecs.shape[1]}\n".encode())
        for w, v in zip(words, vecs, strict=True):
            f.write(w.encode() + b" " + v.astype("<f4").tobytes() + b"\n")


@pytest.fixture()
def model(tmp_path):
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((len(WORDS), 8)).astype(np.float32)
    vecs[WORDS.index("copy2")] = vecs[WORDS.index("copy")]  # an exact tie
    vecs[WORDS.index("zz")] = 0  # a zero row
    path = tmp_path / "m.bin"
    write_w2v(path, WORDS, vecs)
    return path


def answers_from_oracle(words, rows, k, wrong_line=None):
    lines = []
    for q in range(len(words)):
        r = list(rows[q][:k])
        if q + 1 == wrong_line:
            r = r[::-1]
        lines.append(json.dumps({"line": q + 1, "query": words[q], "results": [{"word": words[i]} for i in r]}))
    n = len(words)
    lines.append(json.dumps({"summary": {"lines": n, "queries": n, "answered": n, "failed": 0, "fallbacks": 0}}))
    return "\n".join(lines) + "\n"


def test_words_file_is_every_word_in_distancies_order(model, tmp_path):
    out = tmp_path / "w.txt"
    assert ewo.main(["words", str(model), str(out)]) == 0
    listed = out.read_text(encoding="utf-8").split("\n")[:-1]
    assert sorted(listed, key=lambda w: w.encode()) == listed and set(listed) == set(WORDS)


def test_oracle_ties_go_to_the_lower_row_and_exclude_the_word(model):
    words, vecs = ewo.load(model)
    rows, sims = ewo.oracle_topk(vecs, 4)
    for q in range(len(words)):
        assert q not in rows[q]
        assert all(sims[q][i] >= sims[q][i + 1] for i in range(3))
    c, c2 = words.index("copy"), words.index("copy2")
    for q in range(len(words)):
        r = list(rows[q])
        if c in r and c2 in r and q not in (c, c2):
            assert r.index(min(c, c2)) < r.index(max(c, c2))


def test_check_counts_exact_and_wrong(model, tmp_path):
    wfile = tmp_path / "w.txt"
    ewo.main(["words", str(model), str(wfile)])
    words, vecs = ewo.load(model)
    rows, _ = ewo.oracle_topk(vecs, 3)
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text(answers_from_oracle(words, rows, 3))
    bad.write_text(answers_from_oracle(words, rows, 3, wrong_line=1))
    out = tmp_path / "check.json"
    assert ewo.main(["check", str(model), str(wfile), str(good), "-k", "3", "--out", str(out)]) == 0
    rep = json.loads(out.read_text())["pipelines"][0]
    assert rep["exact"] == len(WORDS) and rep["wrong"] == 0 and rep["answered"] == len(WORDS)
    assert ewo.main(["check", str(model), str(wfile), str(good), str(bad), "-k", "3", "--out", str(out)]) == 1
    assert json.loads(out.read_text())["pipelines"][1]["wrong"] == 1
