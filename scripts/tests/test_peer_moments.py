"""scripts/peers/peer_moments.py without a GPU: the generator is bit for bit the C++ one (the same
values tests/test_moments_oracle.cpp checks), the fp64 oracle and error measure, and a NumPy-only
run writing Google Benchmark-shaped JSON."""
import json
import math

import numpy as np

from scripts.peers import peer_moments


def test_generator_matches_the_cpp_one():
    x = peer_moments.moments_matrix(1, 3, 3)
    assert x.dtype == np.float32 and x.shape == (3, 3)
    assert float(x[0, 0]) == 0.01549344789236784
    assert float(x[2, 1]) == 0.5236557722091675
    assert float(peer_moments.moments_matrix(42, 12346, 300)[12345, 7]) == 0.26222479343414307
    # chunking does not change it
    a = peer_moments.moments_matrix(5, 1000, 7)
    b = peer_moments.moments_matrix(5, 1000, 7, chunk=333)
    assert np.array_equal(a, b)


def test_oracle_and_errors():
    x = np.array([[1, 5], [2, 5], [3, 5], [4, 5], [10, 5]], dtype=np.float32)
    mean, var, skew, kurt = peer_moments.oracle(x)
    assert mean[0] == 4.0 and var[0] == 10.0
    assert math.isclose(skew[0], 1.1384199576606167, rel_tol=1e-12)
    assert math.isclose(kurt[0], -0.21199999999999974, rel_tol=1e-12)
    assert var[1] == 0 and np.isnan(skew[1]) and np.isnan(kurt[1])  # constant column
    want = (mean, var, skew, kurt)
    same = peer_moments.rel_errors(want, want)
    assert all(v == 0 for v in same.values())
    got = (mean + np.array([0.5, 0]), var, skew, kurt)
    e = peer_moments.rel_errors(got, want)
    assert math.isclose(e["rel_error_mean"], 0.5 / 4)  # scaled by max(|mean|, sd)
    one_sided = (mean, var, np.array([np.nan, np.nan]), kurt)
    assert peer_moments.rel_errors(one_sided, want)["rel_error_skewness"] == math.inf


def test_numpy_run_writes_benchmark_json(tmp_path):
    out = tmp_path / "p.json"
    peer_moments.main(["--out", str(out), "--peers", "numpy", "--cols", "1,33", "--max-log2", "14",
                       "--budget-ms", "5", "--most", "2"])
    doc = json.loads(out.read_text())
    names = [e["name"] for e in doc["benchmarks"]]
    assert names == ["peer_moments/numpy/rows:1024/cols:1", "peer_moments/numpy/rows:16384/cols:1",
                     "peer_moments/numpy/rows:32/cols:33", "peer_moments/numpy/rows:497/cols:33"]
    for e in doc["benchmarks"]:
        assert e["kernel_ms"] > 0 and e["total_ms"] == e["kernel_ms"]
        assert e["elements"] == e["rows"] * e["cols"]
        assert e["rel_error_variance"] < 1e-5 and e["rel_error_kurtosis"] < 1e-4
    assert doc["context"]["numpy"] == np.__version__
