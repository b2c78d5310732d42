"""scripts/analysis/filter_candidates.py: its plan mirrors the C++ policy (FilterScanPolicy in
tests/test_batch.cpp checks the same figures there), and a small model's run reports counts
that bound the K best."""
import json

import numpy as np

from scripts.analysis import filter_candidates as fc
from scripts.tests import tool
from scripts.tests.test_batch_peers import write_native


def test_plan_mirrors_the_policy():
    sample, cap = fc.plan(2196016, 64)
    assert len(sample) == 11856 and cap == 4 * 11855 + 1024
    assert sample[16] == 185 * 16 and sample[15] == 15  # every stride-th 16-row group (stride 185)
    assert fc.plan(1000, 64) == (None, 1000)
    sample, cap = fc.plan(100003, 64)
    assert cap < 100003 and len(sample) == 159 * 16


def test_run_on_a_small_model(tmp_path):
    rng = np.random.default_rng(3)
    rows, dim = 20000, 16
    x = rng.standard_normal((rows, dim)).astype(np.float32)
    path = write_native(tmp_path / "m.dsv", [f"w{i:05d}" for i in range(rows)], x)
    out = tmp_path / "o.json"
    p = tool.run("scripts.analysis.filter_candidates", path, "--queries", "50",
                 "--out", str(out), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    assert r["queries"] == 50 and r["K"] == 64 and r["rows"] == rows
    assert r["candidates"]["median"] >= 64  # the threshold is below the K-th best of the model
    assert r["overflowing_queries"] == 0 and r["share_of_capacity"]["max"] < 1


def test_too_small_to_seed(tmp_path):
    x = np.eye(8, 16, dtype=np.float32) + 1
    path = write_native(tmp_path / "s.dsv", [f"w{i}" for i in range(8)], x)
    p = tool.run("scripts.analysis.filter_candidates", path, capture_output=True, text=True)
    assert p.returncode != 0 and "too few to seed" in p.stderr
