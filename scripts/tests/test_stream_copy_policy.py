"""scripts/codegen/stream_copy_policy.py: the making of the streamed int8 copy in streamed fp32
queries, from the stream/ fixtures' runs; the committed file is what the committed runs give."""
import json
from pathlib import Path

from scripts.codegen import stream_copy_policy as scp

ROOT = Path(__file__).resolve().parents[2]
RUNS = sorted(str(p) for p in (ROOT / "results/scale/stream-copy").glob("*.json*"))


def run(samples):
    """A run with iterations of stream/fused and stream/fused_i8 on one model axis."""
    benches = []
    for name, t, making in samples:
        b = {"name": f"{name}/manual_time", "run_name": f"{name}/manual_time", "run_type": "iteration",
             "real_time": t}
        if making is not None:
            b["host_copy_ms"] = making
        benches.append(b)
    return {"context": {"distancies_commit": "abc"}, "benchmarks": benches}


def test_the_committed_policy_is_what_the_committed_runs_give():
    assert RUNS, "no committed stream-copy runs"
    assert scp.main(["--check", *RUNS, "--out", str(ROOT / scp.OUT)]) == 0


def test_the_largest_ratio_rounded_up(tmp_path):
    a = tmp_path / "a.json"
    a.write_text(json.dumps(run([("stream/fused/memory:half", 50.0, None), ("stream/fused/memory:half", 52.0, None),
                                 ("stream/fused_i8/memory:half", 13.0, 330.0),
                                 ("stream/fused_i8/memory:half", 13.1, 320.0)])))
    b = tmp_path / "b.json"
    b.write_text(json.dumps(run([("stream/fused/rows:10", 100.0, None), ("stream/fused_i8/rows:10", 30.0, 701.0)])))
    text = scp.render([str(a), str(b)])
    assert "a.json memory:half: 6.37" in text  # the medians: 325 / 51
    assert "b.json rows:10: 7.01" in text
    assert text.rstrip().endswith("kStreamCopyMaking = 8;")
    out = tmp_path / "policy.inc"
    assert scp.main([str(a), str(b), "--out", str(out)]) == 0
    assert out.read_text() == text
    assert scp.main(["--check", str(a), "--out", str(out)]) == 1  # a alone gives 7


def test_runs_without_both_fixtures_are_one_error_line(tmp_path, capsys):
    a = tmp_path / "a.json"
    a.write_text(json.dumps(run([("stream/fused/memory:half", 50.0, None)])))
    assert scp.main([str(a), "--out", str(tmp_path / "x.inc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("stream_copy_policy: error: no run has both")
