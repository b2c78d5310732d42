"""scripts/analysis/analogy.py: the batch it writes, the sidecar, and the exact numbers of `score`."""
import json
import os

import pytest

from scripts.tests import tool

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "scripts.analysis.analogy"

QUESTIONS = """\
: capital-common-countries
Athens Greece Baghdad Iraq
Athens Greece Bangkok Thailand

: family
boy girl brother sister
: gram1-adjective-to-adverb
amazing amazingly apparent apparently
calm calmly cheerful cheerfully
"""

EXPRESSIONS = ["greece - athens + baghdad", "greece - athens + bangkok", "girl - boy + brother",
               "amazingly - amazing + apparent", "calmly - calm + cheerful"]


def run(*args):
    p = tool.run(SCRIPT, *args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def result(line, query, word=None, error=None):
    if error is not None:
        return json.dumps({"line": line, "query": query, "error": error})
    return json.dumps({"line": line, "query": query, "k": 1, "results": [
        {"rank": 1, "word": word, "row": 7, "similarity": 0.75}]})


RUN_SUMMARY = {"queries": 5, "errors": 2, "device": "gpu", "total_ms": 12.5}
# 1 right, 2 wrong, 3 unknown word, 4 right, 5 unknown word.
RESULTS = [result(1, EXPRESSIONS[0], "iraq"), result(2, EXPRESSIONS[1], "vietnam"),
           result(3, EXPRESSIONS[2], error="unknown word: 'brother'"), result(4, EXPRESSIONS[3], "apparently"),
           result(5, EXPRESSIONS[4], error="unknown word: 'cheerful'"), json.dumps({"summary": RUN_SUMMARY})]


@pytest.fixture
def batch(tmp_path):
    q = tmp_path / "questions-words.txt"
    q.write_text(QUESTIONS)
    b = tmp_path / "batch.txt"
    rc, out, err = run("make", q, "--out", b, "--lowercase")
    assert rc == 0, err
    assert "5 questions in 3 sections" in out
    return b


def write_results(tmp_path, lines):
    r = tmp_path / "results.jsonl"
    r.write_text("\n".join(lines) + "\n")
    return r


def test_make_writes_b_minus_a_plus_c_and_the_sidecar(batch):
    assert batch.read_text().splitlines() == EXPRESSIONS
    side = json.loads((batch.parent / "batch.txt.json").read_text())
    assert side["lowercase"] is True
    assert side["sections"] == ["capital-common-countries", "family", "gram1-adjective-to-adverb"]
    assert side["semantic_sections"] == ["capital-common-countries", "family"]
    assert side["syntactic_sections"] == ["gram1-adjective-to-adverb"]
    assert [(it["line"], it["section"], it["expected"]) for it in side["items"]] == [
        (1, "capital-common-countries", "iraq"), (2, "capital-common-countries", "thailand"),
        (3, "family", "sister"), (4, "gram1-adjective-to-adverb", "apparently"),
        (5, "gram1-adjective-to-adverb", "cheerfully")]
    assert side["items"][0]["question"] == ["athens", "greece", "baghdad", "iraq"]


def test_make_keeps_case_without_lowercase(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text(": capital-common-countries\nAthens Greece Baghdad Iraq\n")
    rc, _, err = run("make", q, "--out", tmp_path / "b.txt")
    assert rc == 0, err
    assert (tmp_path / "b.txt").read_text() == "Greece - Athens + Baghdad\n"
    assert json.loads((tmp_path / "b.txt.json").read_text())["items"][0]["expected"] == "Iraq"


def test_score_exact_numbers(tmp_path, batch):
    r = write_results(tmp_path, RESULTS)
    out_json = tmp_path / "summary.json"
    rc, out, err = run("score", batch, r, "--out", out_json)
    assert rc == 0, err
    s = json.loads(out_json.read_text())
    assert s["overall"] == {"questions": 5, "answered": 3, "skipped": 2, "correct": 2,
                            "accuracy_answered": 2 / 3, "accuracy_all": 2 / 5}
    assert s["semantic"] == {"questions": 3, "answered": 2, "skipped": 1, "correct": 1,
                             "accuracy_answered": 0.5, "accuracy_all": 1 / 3}
    assert s["syntactic"] == {"questions": 2, "answered": 1, "skipped": 1, "correct": 1,
                              "accuracy_answered": 1.0, "accuracy_all": 0.5}
    by = {x["section"]: x for x in s["sections"]}
    assert [x["section"] for x in s["sections"]] == ["capital-common-countries", "family",
                                                     "gram1-adjective-to-adverb"]
    assert by["capital-common-countries"]["correct"] == 1 and by["capital-common-countries"]["answered"] == 2
    assert by["family"] == {"section": "family", "questions": 1, "answered": 0, "skipped": 1, "correct": 0,
                            "accuracy_answered": None, "accuracy_all": 0.0}
    assert s["run"] == RUN_SUMMARY
    lines = out.splitlines()
    assert any(line.startswith("overall") and "66.67%" in line and "40.00%" in line for line in lines)
    assert any(line.startswith("family") and " - " in line for line in lines)


def test_score_accepts_results_in_any_order_and_empty_results(tmp_path, batch):
    lines = RESULTS[:-1][::-1] + RESULTS[-1:]
    lines[0] = json.dumps({"line": 5, "query": EXPRESSIONS[4], "results": []})  # answered, no word: wrong
    rc, _, err = run("score", batch, write_results(tmp_path, lines), "--out", tmp_path / "s.json")
    assert rc == 0, err
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["overall"]["answered"] == 4 and s["overall"]["correct"] == 2


@pytest.mark.parametrize("lines, message", [
    (RESULTS[:-1], "no final"),
    (RESULTS[:2] + RESULTS[3:], "no result for 1 of 5 batch lines (3)"),
    (RESULTS[:1] + RESULTS, "a second result for batch line 1"),
    ([result(1, "greece - athens + bangkok", "iraq")] + RESULTS[1:], "is not the batch's"),
    (RESULTS + [RESULTS[0]], "after the final summary"),
    (["not json"] + RESULTS, "not JSON"),
    ([json.dumps({"line": 9, "results": []})] + RESULTS, "1..5"),
    ([json.dumps({"line": 1, "query": EXPRESSIONS[0]})] + RESULTS[1:], "neither 'results'"),
])
def test_score_rejects_bad_results_with_one_line(tmp_path, batch, lines, message):
    rc, out, err = run("score", batch, write_results(tmp_path, lines), "--out", tmp_path / "s.json")
    assert rc == 1 and out == ""
    assert err.startswith("analogy.py: error: ") and message in err and len(err.strip().splitlines()) == 1


def test_bad_questions_and_missing_sidecar(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text(": s\na b c\n")
    rc, _, err = run("make", q, "--out", tmp_path / "b.txt")
    assert rc == 1 and "q.txt:2: expected 4 words" in err
    rc, _, err = run("make", tmp_path / "absent.txt", "--out", tmp_path / "b.txt")
    assert rc == 1 and "absent.txt: No such file" in err
    (tmp_path / "lone.txt").write_text("x - y + z\n")
    rc, _, err = run("score", tmp_path / "lone.txt", tmp_path / "r.jsonl", "--out", tmp_path / "s.json")
    assert rc == 1 and "lone.txt.json" in err
