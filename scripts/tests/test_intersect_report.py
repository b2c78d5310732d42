"""scripts/reports/intersect_report.py on made-up JSON: the study's table with ours beside it, the goals
line, both plots, failed fixtures listed, and bad input as one error line."""

from scripts.reports import intersect_report
from scripts.tests import gbfake, tool


def one(ms, **counters):
    return [{"real_time": ms * m, **{k: v * m for k, v in counters.items()}} for m in (0.98, 1.0, 1.05)]


def fake_run(tmp_path, batch_ms=0.1):
    b = []
    b += gbfake.entries("intersect/floor/set:gov2", one(0.08, gb_per_s=3000))
    for alg, serial in (("svs", 300.0), ("adp", 250.0), ("hash", 500.0)):
        b += gbfake.entries(f"intersect/{alg}/serial/set:gov2", one(serial), suffix="/iterations:2/manual_time")
        for grain, t in (("coarse", 40.0), ("fine", 60.0), ("coarse_batch", batch_ms), ("fine_batch", 2 * batch_ms)):
            b += gbfake.entries(f"intersect/{alg}/{grain}/set:gov2", one(t, floor_ratio=t / 0.08, gb_per_s=1.0,
                                                                          queries_per_s=1e6))
        for grain in ("coarse", "fine"):
            b += gbfake.entries(f"intersect/{alg}/{grain}/set:gov2/mem:managed", one(70.0))
    b += gbfake.errored("intersect/bitmap/coarse_batch/set:gov2", "out of GPU memory")
    for v in ("svs_serial", "svs_coarse_batch"):
        for r in (1, 4, 16):
            b += gbfake.entries(f"intersect_shape/{v}/ratio:{r}", one(0.1 * r))
        for k in (1, 2, 3):
            b += gbfake.entries(f"intersect_shape/{v}/terms:{k}", one(0.2 * k))
    return gbfake.write(tmp_path / "bench.json", gbfake.document(b))


def test_table_goals_and_plots(tmp_path):
    out = tmp_path / "out"
    intersect_report.main([fake_run(tmp_path), "--out", str(out)])
    md = (out / "intersection.md").read_text()
    # The study's figures beside ours, and the best speed-up over our own serial time.
    assert ("| SVS | 4379.99 | 199.27 | 237.43 | 300.000 | 40.000 | 70.000 | 60.000 | 70.000 | 0.100 | 0.200 "
            "| 3000x |") in md
    assert "| Hash(512) | 15422.8 | 361.25 | 749.41 | 500.000 |" in md
    assert "the best batch (intersect/" in md and "3000x serial SVS (goal >= 1000x: met)" in md
    assert "1.25x the floor" in md and "goal <= 1.5x: met" in md
    assert "- intersect/bitmap/coarse_batch/set:gov2: out of GPU memory" in md
    for axis in ("ratio", "terms"):
        assert (out / f"intersect_time_vs_{axis}.png").stat().st_size > 1000
        assert f"intersect_time_vs_{axis}.png" in md


def test_goals_not_met_are_said(tmp_path):
    out = tmp_path / "out"
    intersect_report.main([fake_run(tmp_path, batch_ms=1.0), "--out", str(out)])
    md = (out / "intersection.md").read_text()
    assert "is 300x serial SVS (goal >= 1000x: not met)" in md
    assert "goal <= 1.5x: not met" in md


def test_bad_input_is_one_error_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = tool.run("scripts.reports.intersect_report", str(bad), "--out",
                 str(tmp_path / "o"), capture_output=True, text=True)
    assert r.returncode != 0 and r.stderr.strip().startswith("intersect_report.py: error:")
    empty = gbfake.write(tmp_path / "empty.json", gbfake.document(gbfake.entries("dot/x", one(1.0))))
    r = tool.run("scripts.reports.intersect_report", empty, "--out",
                 str(tmp_path / "o"), capture_output=True, text=True)
    assert r.returncode != 0 and "has no intersect/ fixtures" in r.stderr
