"""scripts/analysis/eight_bit_certification.py on a small Gaussian word2vec file: the JSON it writes, int8
certifying every query (the gap between the 11th and 64th similarity of random rows is far wider
than its bound) and never less often than e4m3; a missing model is one error line."""
import json
import os

import numpy as np
import pytest

from scripts.analysis import eight_bit_certification as ebc
from scripts.tests import tool

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = "scripts.analysis.eight_bit_certification"

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
    tool.run(SCRIPT, "--model", str(model), "--queries", "40", "--out", str(out), check=True,
             capture_output=True)
    d = json.loads(out.read_text())
    assert d["rows"] == 2000 and d["dim"] == 32 and d["queries"] == 40
    rates = d["certified_fraction"]
    assert rates["int8"]["k11"] == 1.0
    for k in ("k11", "k100"):
        assert 0.0 <= rates["e4m3"][k] <= rates["int8"][k] <= 1.0
    assert d["global_bound"]["e4m3"] > 0.0625 > d["global_bound"]["int8_median"] > 0


def test_missing_model_is_one_error_line(tmp_path):
    r = tool.run(SCRIPT, "--model", str(tmp_path / "absent.bin"), capture_output=True, text=True)
    assert r.returncode != 0
    assert r.stderr.strip().count("\n") == 0 and "cannot read" in r.stderr




@pytest.mark.parametrize("dim", [7, 50, 300])
def test_batch_bounds_hold(dim):
    # Random rows with a zero row, a one-spike row and rows of very different norms; queries
    # normalised in fp32 as the kernels would have them: every |exact - approx| within its bound.
    rng = np.random.default_rng(dim)
    x = rng.standard_normal((400, dim)).astype(np.float32)
    x[3] = 0
    x[4] = 0
    x[4, 0] = 1e-3
    x[5:50] *= np.float32(1e-4)
    x[50:60] *= np.float32(1e4)
    norm = np.sqrt((x.astype(np.float64) ** 2).sum(axis=1))
    safe = np.where(norm > 0, norm, 1.0)
    c8, sc8 = ebc.int8_codes(x)
    e8, se8 = ebc.e4m3_codes(x)
    dec = e8 * se8[:, None]
    for _ in range(20):
        q = rng.standard_normal(dim)
        qh = (q / np.linalg.norm(q)).astype(np.float32)
        exact = x.astype(np.float64) @ qh.astype(np.float64) / safe
        a8, E8 = ebc.batch_int8_keys(qh, c8, sc8, np.abs(c8).sum(axis=1), safe, dim)
        assert np.all(np.abs(exact - a8) <= E8)
        af, Ef = ebc.batch_e4m3_keys(qh, dec, se8, np.sqrt((dec ** 2).sum(axis=1)), np.abs(dec).sum(axis=1), safe, dim)
        assert np.all(np.abs(exact - af) <= Ef)
        # the int8 bound is the tighter on rows of one scale: most of e4m3's is its mantissa
        assert np.median(E8[60:]) < np.median(Ef[60:])


def test_batch_section_in_the_json(tmp_path):
    model, out = tmp_path / "m.bin", tmp_path / "out.json"
    write_w2v(model)
    tool.run(SCRIPT, "--model", str(model), "--queries", "40", "--out", str(out), check=True,
             capture_output=True)
    b = json.loads(out.read_text())["batch_tensor_core"]
    for k in ("k11", "k100"):
        assert 0.0 <= b["certified_fraction"]["e4m3"][k] <= b["certified_fraction"]["int8"][k] <= 1.0
    assert 0 < b["bound_median"]["int8"] < b["bound_median"]["e4m3"]
    for c in ("int8", "e4m3", "fp16_reference"):
        assert 64 <= b["candidates_K64"][c]["median"] <= b["candidates_K64"][c]["max"] <= 2000
