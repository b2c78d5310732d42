"""scripts/reports/moments_report.py on fake bench and peer JSON: the tables restate the numbers."""
import json

import pytest

from scripts.reports import moments_report


def entry(name, ms, **counters):
    if name.startswith("moments/"):  # as Google Benchmark names our fixtures
        name += "/min_time:0.050/manual_time"
    e = {"name": name, "run_name": name, "run_type": "iteration", "real_time": ms, "time_unit": "ms",
         "kernel_ms": ms}
    e.update(counters)
    return e


def fake_bench():
    b = []
    for cols in (31, 32, 33, 300):
        rows = (1 << 28) // cols + 1
        el = rows * cols
        floor = 0.33
        b.append(entry(f"moments/floor/rows:{rows}/cols:{cols}", floor, floor_ratio=1.0, elements_per_ms=el / floor))
        b.append(entry(f"moments/one_pass/rows:{rows}/cols:{cols}", 0.36, floor_ratio=1.09, gb_per_s=2980.0,
                       elements_per_ms=el / 0.36, rel_error_mean=1e-8, rel_error_variance=2e-7,
                       rel_error_skewness=3e-6, rel_error_kurtosis=4e-6))
        b.append(entry(f"moments/two_pass/rows:{rows}/cols:{cols}", 0.80, floor_ratio=2.42,
                       elements_per_ms=el / 0.80, rel_error_skewness=5e-6))
        small_rows = max(1, 1024 // cols)
        b.append(entry(f"moments/one_pass/rows:{small_rows}/cols:{cols}", 0.012, floor_ratio=3.0,
                       elements_per_ms=small_rows * cols / 0.012))
    # a repetition's aggregates: only the median counts
    b.append({"name": "moments/one_pass/rows:4/cols:300/min_time:0.050/manual_time_mean",
              "run_name": "moments/one_pass/rows:4/cols:300/min_time:0.050/manual_time",
              "run_type": "aggregate", "aggregate_name": "mean", "real_time": 99.0, "time_unit": "ms",
              "kernel_ms": 99.0})
    return {"context": {"gpu": "NVIDIA H100 80GB HBM3", "gpu_sm_count": "132", "gpu_memory_gib": "79.1"},
            "benchmarks": b}


def fake_peers():
    rows = (1 << 28) // 300 + 1
    return {"context": {}, "benchmarks": [
        entry(f"peer_moments/torch_gpu/rows:{rows}/cols:300", 1.44, total_ms=90.0, rel_error_skewness=2e-5),
        entry(f"peer_moments/cupy/rows:{rows}/cols:300", 0.54, total_ms=88.0)]}


def run(tmp_path, bench, peers=None):
    bp = tmp_path / "bench.json"
    bp.write_text(json.dumps(bench))
    args = [str(bp), "--out", str(tmp_path / "out")]
    if peers:
        pp = tmp_path / "peers.json"
        pp.write_text(json.dumps(peers))
        args += ["--peers", str(pp)]
    moments_report.main(args)
    return (tmp_path / "out" / "moments_report.md").read_text()


def test_findings_goals_and_errors(tmp_path):
    md = run(tmp_path, fake_bench(), fake_peers())
    assert "NVIDIA H100 80GB HBM3 (132 SMs, 79 GiB)" in md
    assert "RTX 3050" in md
    assert "| one_pass <= 1.15x the read floor (2^28 elements, 300 columns) | 1.09x | yes |" in md
    assert "| two_pass <= 2.3x the read floor (2^28 elements, 300 columns) | 2.42x | no |" in md
    assert "| >= 3x torch_gpu (2^28 elements, 300 columns) | 4x | yes |" in md
    assert "| >= 2x cupy (2^28 elements, 300 columns) | 1.5x | no |" in md
    assert "at most 12 us per call" in md  # the mean aggregate of 99 ms is ignored
    assert "| small inputs (<= 2^16 elements) <= 30 us per call | 12 us | yes |" in md
    assert "| one_pass | 1.0e-08 | 2.0e-07 | 3.0e-06 | 4.0e-06 |" in md
    assert "| torch_gpu | n/a | n/a | 2.0e-05 | n/a |" in md
    assert "| peer torch_gpu | 1.44 | 90 | 4x |" in md
    assert "| two_pass | 0.8 | n/a | 2.22x |" in md
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    for png in ("moments_time_by_cols.png", "moments_time_vs_cols.png"):
        assert (tmp_path / "out" / png).stat().st_size > 0
        assert f"![{png}]({png})" in md


def test_without_peers_the_peer_goals_are_not_met(tmp_path):
    md = run(tmp_path, fake_bench())
    assert "| >= 3x torch_gpu (2^28 elements, 300 columns) | n/ax | no |" in md


def test_bad_input_is_one_clear_error(tmp_path):
    with pytest.raises(SystemExit, match="no moments/ fixtures"):
        run(tmp_path, {"benchmarks": []})
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(SystemExit, match="bad.json"):
        moments_report.main([str(bad), "--out", str(tmp_path)])
