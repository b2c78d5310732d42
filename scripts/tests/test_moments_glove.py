"""`distancies moments` on the real GloVe 6B 50d (scripts/fetch_glove.sh) against NumPy and,
where installed, SciPy: every dimension's mean, variance, skewness and kurtosis, both
estimator settings. Runs on the GPU when there is one, else on the CPU fallback (the JSON
says which). Skips when the model or the built binary is absent.

Environment: DISTANCIES_BIN (default build/harness/cli/distancies), GLOVE_W2V (default
.cache/models/glove.6B.50d.w2v.bin).
"""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("DISTANCIES_BIN", ROOT / "build/harness/cli/distancies"))
MODEL = Path(os.environ.get("GLOVE_W2V", ROOT / ".cache/models/glove.6B.50d.w2v.bin"))


def read_w2v(path):
    """word2vec binary as scripts/data/glove_wheel_to_w2v.py writes it: 'rows dim\\n', then per row
    'word ' + dim little-endian float32 + '\\n'."""
    data = path.read_bytes()
    head_end = data.index(b"\n")
    rows, dim = map(int, data[:head_end].split())
    out = np.empty((rows, dim), dtype=np.float32)
    pos = head_end + 1
    for r in range(rows):
        sp = data.index(b" ", pos)
        out[r] = np.frombuffer(data, dtype="<f4", count=dim, offset=sp + 1)
        pos = sp + 1 + 4 * dim
        if pos < len(data) and data[pos:pos + 1] == b"\n":
            pos += 1
    return out


def numpy_moments(x, unbiased, fisher):
    x = x.astype(np.float64)
    n = x.shape[0]
    mean = x.mean(0)
    d = x - mean
    m2, m3, m4 = (d ** 2).mean(0), (d ** 3).mean(0), (d ** 4).mean(0)
    g1, g2 = m3 / m2 ** 1.5, m4 / m2 ** 2 - 3
    var = x.var(0, ddof=1 if unbiased else 0)
    if unbiased:
        g1 = g1 * np.sqrt(n * (n - 1)) / (n - 2)
        g2 = ((n + 1) * g2 + 6) * (n - 1) / ((n - 2) * (n - 3))
    return mean, var, g1, g2 if fisher else g2 + 3


@pytest.fixture(scope="module")
def glove():
    if not MODEL.is_file():
        pytest.skip(f"real GloVe model absent ({MODEL}): run scripts/fetch_glove.sh")
    if not BIN.is_file():
        pytest.skip(f"distancies binary absent ({BIN}): build it first")
    return read_w2v(MODEL)


@pytest.mark.parametrize("unbiased,fisher", [(False, True), (True, False)])
def test_moments_match_numpy_and_scipy(glove, unbiased, fisher):
    args = [str(BIN), "moments", "--model", str(MODEL), "--json", "--top", "3"]
    args += ["--unbiased"] if unbiased else []
    args += [] if fisher else ["--pearson"]
    got = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    assert got["rows"] == glove.shape[0] and got["dim"] == glove.shape[1] == 50
    mean, var, skew, kurt = numpy_moments(glove, unbiased, fisher)
    sd = np.sqrt(var)
    # The study's goals for fp32 input: 1e-6 for mean and variance, 1e-4 for skewness, kurtosis.
    assert np.max(np.abs(np.array(got["mean"]) - mean) / np.maximum(np.abs(mean), sd)) <= 1e-6
    assert np.max(np.abs(np.array(got["variance"]) - var) / var) <= 1e-6
    assert np.max(np.abs(np.array(got["skewness"]) - skew) / np.maximum(np.abs(skew), 1)) <= 1e-4
    assert np.max(np.abs(np.array(got["kurtosis"]) - kurt) / np.maximum(np.abs(kurt), 1)) <= 1e-4
    # The summary: the norm of the mean vector, the dimensions of largest |skewness|.
    assert got["summary"]["mean_norm"] == pytest.approx(np.linalg.norm(mean), rel=1e-6)
    top = [d["dim"] for d in got["summary"]["largest_abs_skewness"]]
    assert top == list(np.argsort(-np.abs(skew), kind="stable")[:3])
    try:
        from scipy import stats
    except ImportError:
        return
    x = glove.astype(np.float64)
    np.testing.assert_allclose(got["skewness"], stats.skew(x, axis=0, bias=not unbiased), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got["kurtosis"], stats.kurtosis(x, axis=0, fisher=fisher, bias=not unbiased),
                               rtol=1e-4, atol=1e-4)
