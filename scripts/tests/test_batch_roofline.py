"""scripts/reports/batch_roofline.py: the work model of each scan kind, the peak by precision, the merge
of several runs, and its errors; checked against hand-computed figures of small synthetic runs."""
import json
import os

import pytest

from scripts.reports import batch_roofline as br
from scripts.tests import tool

HERE = os.path.dirname(os.path.abspath(__file__))

REGISTRY = {"embeddings": {"batch": [
    {"name": "loop", "traits": {"scan": "per_query", "precision": "fp32", "queries_per_model_read": "1"}},
    {"name": "tiles_h", "traits": {"scan": "gemm_tiles", "precision": "fp16", "copy": "f16",
                                   "queries_per_model_read": "0", "scores": "f16"}},
    {"name": "fused", "traits": {"scan": "fused_tensor_core", "precision": "fp16", "copy": "f16",
                                 "queries_per_model_read": "128"}},
    {"name": "old"},  # no traits: not modelled
]}}
CTX = {"floor_gb_per_s": 1000.0, "gpu_compute_capability": "9.0", "gpu_sm_count": 100,
       "gpu_max_sm_clock_mhz": 2000, "distancies_commit": "abcdef012345", "gpu": "test GPU"}


def bench(pipeline, batch, ms, rows=1_000_000, dim=300, clock=1000.0):
    return {"name": f"batch/{pipeline}/batch:{batch}/manual_time_median",
            "run_name": f"batch/{pipeline}/batch:{batch}/manual_time",
            "run_type": "aggregate", "aggregate_name": "median", "real_time": ms, "time_unit": "ms",
            "rows": rows, "dim": dim, "sm_clock_mhz": clock}


def run(*benches, ctx=CTX):
    return {"context": dict(ctx), "benchmarks": list(benches)}


def test_work_model_of_each_scan_kind():
    rows = {(r["pipeline"], r["batch"]): r for r in br.table(REGISTRY, [run(
        bench("loop", 4, 10.0), bench("tiles_h", 1024, 10.0), bench("fused", 256, 10.0))])}
    # Per-query loop: 4 reads of the fp32 model (ld 300), 1e6 x 300 x 4 B = 1.2 GB each, at 1 TB/s.
    assert rows[("loop", 4)]["bytes_ms"] == pytest.approx(4 * 1.2)
    # fp32 on CUDA cores: 256 FLOP/SM/clock x 100 SMs x 1 GHz = 25.6 TFLOP/s; 2 x 4 x 1e6 x 300 FLOP.
    assert rows[("loop", 4)]["flop_ms"] == pytest.approx(2.4e9 / 25.6e12 * 1e3)
    # Tiles with fp16 scores: the fp16 copy (ld 304) once, plus 2 x B x rows x 2 B of scores.
    t = rows[("tiles_h", 1024)]
    assert t["bytes_ms"] == pytest.approx((1e6 * 304 * 2 + 2 * 1024 * 1e6 * 2) / 1e12 * 1e3)
    assert t["peak_tflops"] == pytest.approx(4096 * 100 * 1e9 / 1e12)
    assert t["bound"] == "memory" and t["x_floor"] == pytest.approx(10.0 / t["bytes_ms"])
    # The fused scan reads the copy once per 128 queries: twice at B = 256.
    assert rows[("fused", 256)]["bytes_ms"] == pytest.approx(2 * 1e6 * 304 * 2 / 1e12 * 1e3)


def test_compute_bound_and_unknown_architecture():
    r = br.table(REGISTRY, [run(bench("tiles_h", 8192, 100.0, rows=1000, dim=4096))])[0]
    assert r["bound"] == "compute" and r["floor_ms"] == r["flop_ms"]
    other = dict(CTX, gpu_compute_capability="8.0")
    r = br.table(REGISTRY, [run(bench("tiles_h", 16, 1.0), ctx=other)])[0]
    assert r["flop_ms"] is None and r["floor_ms"] == r["bytes_ms"]
    assert "—" in br.markdown([r])


def test_later_run_replaces_earlier_and_unknown_pipelines_are_left_out():
    first = run(bench("fused", 16, 5.0), bench("gone", 16, 1.0))
    second = run(bench("fused", 16, 4.0), ctx=dict(CTX, distancies_commit="fedcba"))
    rows = br.table(REGISTRY, [first, second])
    assert [(r["pipeline"], r["ms"], r["commit"]) for r in rows] == [("fused", 4.0, "fedcba")]


def test_errors_are_one_line(tmp_path):
    reg = tmp_path / "reg.json"
    reg.write_text(json.dumps({"embeddings": {"batch": [{"name": "x"}]}}))
    res = tmp_path / "run.json"
    res.write_text(json.dumps(run(bench("fused", 16, 1.0))))
    p = tool.run("scripts.reports.batch_roofline", "--registry", str(reg), str(res),
                 capture_output=True, text=True)
    assert p.returncode != 0 and "no batch pipelines with traits" in p.stderr
    reg.write_text(json.dumps(REGISTRY))
    no_floor = dict(CTX)
    del no_floor["floor_gb_per_s"]
    res.write_text(json.dumps(run(bench("fused", 16, 1.0), ctx=no_floor)))
    p = tool.run("scripts.reports.batch_roofline", "--registry", str(reg), str(res),
                 capture_output=True, text=True)
    assert p.returncode != 0 and "floor_gb_per_s" in p.stderr
    res.write_text(json.dumps(run(bench("fused", 16, 1.0))))
    p = tool.run("scripts.reports.batch_roofline", "--registry", str(reg), str(res),
                 capture_output=True, text=True)
    assert p.returncode == 0 and "| 16 | `fused` | 1.000 |" in p.stdout
