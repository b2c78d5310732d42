"""scripts/eight_bit_certification.py on a small Gaussian word2vec file: the JSON it writes, int8
certifying every query (the gap between the 11th and 64th similarity of random rows is far wider
than its bound) and never less often than e4m3; a missing model is one error line."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "eight_bit_certification.py")

pytest.importorskip("ml_dtypes")


def write_w2v(path, rows=2000, dim=32, seed=5):
    x = np.random.default_rng(seed).standard_normal((rows, dim)).astype("<f4")
    with open(path, "wb") as f:
        f.write(f"{rows} {dim}\n".encode())
        for i in range(rows):
            f.write(f"w{i} ".encode() + x[i].tobytes() + b"\n")


def test_writes_rates_and_int8_certifies(tmp_path):
    model, out = tmp_path / "m.bin", tmp_path / "out.json"
    write_w2v(model)
    subprocess.run([sys.executable, SCRIPT, "--model", str(model), "--queries", "40", "--out", str(out)], check=True,
                   capture_output=True)
    d = json.loads(out.read_text())
    assert d["rows"] == 2000 and d["dim"] == 32 and d["queries"] == 40
    rates = d["certified_fraction"]
    assert rates["int8"]["k11"] == 1.0
    for k in ("k11", "k100"):
        assert 0.0 <= rates["e4m3"][k] <= rates["int8"][k] <= 1.0
    assert d["global_bound"]["e4m3"] > 0.0625 > d["global_bound"]["int8_median"] > 0


def test_missing_model_is_one_error_line(tmp_path):
    r = subprocess.run([sys.executable, SCRIPT, "--model", str(tmp_path / "absent.bin")], capture_output=True, text=True)
    assert r.returncode != 0
    assert r.stderr.strip().count("\n") == 0 and "cannot read" in r.stderr
