"""scripts/reports/scale_report.py on made-up JSON: streaming against the floor and the goals (met and
not met), the sweep grid, the sharded efficiency, a floor taken from another file, and bad input
as one error line."""

from scripts.reports import scale_report
from scripts.tests import gbfake, tool


def one(ms, **counters):
    return [{"real_time": ms * m, **{k: v * m for k, v in counters.items()}} for m in (0.99, 1.0, 1.02)]


def fake_run(tmp_path, name="bench.json", batch_ms=55.0, floor=True):
    b = []
    if floor:
        b += gbfake.entries("floor/h2d_pinned", one(50.0, gb_per_s=50.0))
    b += gbfake.entries("pipeline/fused", one(0.9))
    b += gbfake.entries("batch/batch_f16_h/batch:1024", one(6.4))
    b += gbfake.entries("stream/fused/memory:half", one(52.0, h2d_gb_per_s=48.0, bytes=2.5e9, chunks=10))
    b += gbfake.entries("stream/batch_f16_h/memory:half/batch:1024",
                        one(batch_ms, h2d_gb_per_s=2.5e9 / (batch_ms * 1e6), bytes=2.5e9, chunks=13))
    b += gbfake.entries("stream/fused/rows:75000000", one(1800.0, h2d_gb_per_s=50.0, bytes=9e10, chunks=337),
                        suffix="/iterations:3/manual_time")
    for mb in (64, 256):
        for n in (2, 3):
            b += gbfake.entries(f"stream_sweep/fused/chunk_mb:{mb}/buffers:{n}", one(50.0, h2d_gb_per_s=mb / 10 + n))
    b += gbfake.entries("shard/fused/gpus:1/batch:1", one(0.95, exchange_ms=0.02))
    b += gbfake.entries("shard/batch_f16_h/gpus:1/batch:1024", one(6.8, exchange_ms=0.2))
    b += gbfake.errored("shard/batch_f16_h/gpus:1/batch:8192", "out of GPU memory")
    return gbfake.write(tmp_path / name, gbfake.document(b))


def test_goals_sweep_and_shards(tmp_path):
    out = tmp_path / "out"
    assert scale_report.main([fake_run(tmp_path), "--out", str(out)]) == 0
    md = (out / "scale.md").read_text()
    assert "one query, `fused`: 96.0% of the floor's bandwidth (goal >= 85%: met)" in md
    assert "B = 1024, `batch_f16_h`: 1.100 x max(copy, in-memory) (goal <= 1.2: met)" in md
    assert "| 256 | 27.60 | 28.60 |" in md
    assert "| shard/fused/gpus:1/batch:1 | bench.json | 0.950 | 0.020 | 0.900 | 0.95 | 0.947 |" in md
    assert "failed: shard/batch_f16_h/gpus:1/batch:8192: out of GPU memory" in md
    assert "| stream/fused/rows:75000000 | 1800.00 |" in md


def test_a_missed_goal_says_so_and_the_floor_comes_from_another_file(tmp_path):
    out = tmp_path / "out"
    slow = fake_run(tmp_path, "slow.json", batch_ms=70.0, floor=False)
    assert scale_report.main([fake_run(tmp_path), slow, "--out", str(out)]) == 0
    md = (out / "scale.md").read_text()
    assert "Floor from bench.json" in md
    assert "B = 1024, `batch_f16_h`: 1.400 x max(copy, in-memory) (goal <= 1.2: not met)" in md


def test_two_gpus_against_one(tmp_path):
    out = tmp_path / "out"
    two = gbfake.write(tmp_path / "g2.json", gbfake.document(
        gbfake.entries("shard/batch_f16_h/gpus:2/batch:1024", one(4.0, exchange_ms=0.4),
                       suffix="/iterations:10/manual_time")))
    assert scale_report.main([fake_run(tmp_path), two, "--out", str(out)]) == 0
    md = (out / "scale.md").read_text()
    assert "| shard/batch_f16_h/gpus:2/batch:1024 | g2.json | 4.000 | 0.400 | 6.800 | 1.70 | 0.850 |" in md


def test_bad_input_is_one_error_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = tool.run("scripts.reports.scale_report", str(bad), "--out", str(tmp_path),
                 capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and "scale_report: error:" in r.stderr
    empty = gbfake.write(tmp_path / "empty.json", gbfake.document(gbfake.entries("pipeline/fused", one(0.9))))
    r = tool.run("scripts.reports.scale_report", empty, "--out", str(tmp_path),
                 capture_output=True, text=True)
    assert r.returncode == 1 and "no stream/" in r.stderr


def test_the_goals_figures_for_the_goal_file(tmp_path):
    from scripts.lib.bench_json import load
    run = load(fake_run(tmp_path))
    frac, where = scale_report.one_query_fraction([run])
    assert abs(frac - 48.0 / 50.0) < 1e-9 and "memory:half" in where
    ratio, _ = scale_report.batch_ratio([run])
    assert abs(ratio - 55.0 / 50.0) < 1e-9   # the copy floor (2.5e9 B at 50 GB/s) beats the resident 6.4 ms
    bare = load(fake_run(tmp_path, name="bare.json", floor=False))
    try:
        scale_report.one_query_fraction([bare])
    except ValueError as e:
        assert "memory:half" in str(e)
    else:
        raise AssertionError("a run without the copy floor has no fraction")


def test_a_goal_derived_by_the_report(tmp_path):
    from scripts.docs import goals
    path = fake_run(tmp_path)
    goal = {"id": "s", "text": "t", "comparison": ">=", "threshold": 0.85,
            "evidence": {"file": path, "derive": "scripts.reports.scale_report:one_query_fraction"}}
    res = goals.evaluate(goal, tmp_path)
    assert res["status"] == "met" and abs(res["value"] - 0.96) < 1e-9
    res = goals.evaluate({**goal, "threshold": 0.97}, tmp_path)
    assert res["status"] == "missed"
    bad = {**goal, "evidence": {"file": path, "derive": "scripts.reports.scale_report:no_such"}}
    assert goals.evaluate(bad, tmp_path)["status"] == "unknown"


def test_a_derived_goal_over_files_names_the_absent_ones(tmp_path):
    from scripts.docs import goals
    path = fake_run(tmp_path)
    goal = {"id": "s", "text": "t", "comparison": ">=", "threshold": 0.85,
            "evidence": {"file": [path, str(tmp_path / "gone.json")],
                         "derive": "scripts.reports.scale_report:one_query_fraction"}}
    res = goals.evaluate(goal, tmp_path)
    assert res["status"] == "unknown" and "gone.json" in res["why"] and "bench.json" not in res["why"]
