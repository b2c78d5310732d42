"""scripts/analysis/analogy_oracle.py: the fp64 top-1 of each expression, its words excluded, ties to the
lower row, against pipelines' answers (one right, one wrong)."""
import json
import os
import struct

from scripts.tests import tool

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "scripts.analysis.analogy_oracle"

# 2-d rows whose answers are worked out by hand below (row order as written).
WORDS = {"x": (1.0, 0.0), "y": (0.0, 1.0), "z": (1.0, 1.0), "w": (0.1, 1.0), "v": (0.0, 2.0),
         "t": (0.0, 3.0), "nul": (0.0, 0.0)}


def write_model(path):
    with open(path, "wb") as f:
        f.write(f"{len(WORDS)} 2\n".encode())
        for w, (a, b) in WORDS.items():
            f.write(w.encode() + b" " + struct.pack("<2f", a, b) + b"\n")


def answers(path, words, summary):
    with open(path, "w") as f:
        for i, w in enumerate(words, 1):
            f.write(json.dumps({"k": 1, "line": i, "query": "q", "results": [{"rank": 1, "row": 0, "word": w}]}) + "\n")
        f.write(json.dumps({"summary": summary}) + "\n")


def test_oracle_against_right_and_wrong_answers(tmp_path):
    model, batch = tmp_path / "m.bin", tmp_path / "b.txt"
    write_model(model)
    # y - x + z = (0, 2), its words excluded: v and t both at cosine 1, the tie to the lower row
    # (v); w at 0.995. x + z = (2, 1), x and z excluded: w (0.534) beats y, v and t (0.447).
    batch.write_text("y - x + z\nx + z\n")
    right, wrong = tmp_path / "right.jsonl", tmp_path / "wrong.jsonl"
    summary = {"fallbacks": 1, "wall_ms": 3.0, "gpu": {"pipeline": "p", "total_ms": 1.5, "kernel_ms": 1.0}}
    answers(right, ["v", "w"], summary)
    answers(wrong, ["t", "w"], {**summary, "gpu": {**summary["gpu"], "pipeline": "q"}})
    out = tmp_path / "check.json"
    p = tool.run(SCRIPT, str(model), str(batch), str(right), str(wrong), "--out", str(out),
                 "--context", "gpu=test", capture_output=True, text=True)
    assert p.returncode == 1, p.stderr  # one pipeline differs
    rep = json.loads(out.read_text())
    assert rep["context"] == {"gpu": "test"}
    assert rep["queries"] == 2 and rep["unknown_words"] == 0
    ok, bad = rep["pipelines"]
    assert (ok["pipeline"], ok["identical_to_oracle"], ok["differ"], ok["fallbacks"]) == ("p", 2, 0, 1)
    assert ok["fallback_rate"] == 0.5
    assert (bad["identical_to_oracle"], bad["differ"]) == (1, 1)
    assert bad["first_differences"][0]["got"] == "t" and bad["first_differences"][0]["oracle"] == "v"
    assert rep["oracle_ties_at_top1"] == 1  # v and t, both at cosine 1


def test_all_identical_exits_zero_and_bad_input_is_one_line(tmp_path):
    model, batch = tmp_path / "m.bin", tmp_path / "b.txt"
    write_model(model)
    batch.write_text("x + z\n")
    res = tmp_path / "r.jsonl"
    answers(res, ["w"], {"fallbacks": 0, "gpu": {"pipeline": "p", "total_ms": 1.0}})
    out = tmp_path / "c.json"
    p = tool.run(SCRIPT, str(model), str(batch), str(res), "--out", str(out),
                 capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    (tmp_path / "bad.bin").write_bytes(b"not a model\n")
    p = tool.run(SCRIPT, str(tmp_path / "bad.bin"), str(batch), str(res), "--out", str(out),
                 capture_output=True, text=True)
    assert p.returncode != 0 and p.stderr.count("\n") == 1 and "word2vec" in p.stderr
