"""The CPU parts of the batch peers (scripts/peers/batch_peers.py, peer_torch_batch.py, peer_faiss.py,
faiss_bundle.py): query rule, checked positions, fp64 oracle, native loading, JSON shape, errors."""
import importlib.util
import json
import os
import struct

import numpy as np
import pytest

from scripts.lib.bench_json import parse
from scripts.peers import batch_peers as bp
from scripts.tests import tool

ROOT = str(tool.ROOT)


def write_native(path, words, vectors, normalised=False):
    """A version-1 native model (docs/formats.md), words sorted by the caller."""
    vectors = np.asarray(vectors, dtype=np.float32)
    rows, dim = vectors.shape
    ld = (dim + 3) // 4 * 4
    norms = np.linalg.norm(vectors.astype(np.float64), axis=1).astype(np.float32)
    if normalised:
        vectors = vectors / np.where(norms > 0, norms, 1)[:, None]
    vocab = b"".join(w.encode() for w in words)
    offs = np.cumsum([0] + [len(w.encode()) for w in words]).astype("<u8")
    o_off = 96
    v_off = o_off + offs.nbytes
    n_off = v_off + len(vocab)
    x_off = (n_off + 4 * rows + 63) // 64 * 64
    padded = np.zeros((rows, ld), dtype="<f4")
    padded[:, :dim] = vectors
    head = b"DSTNCIES" + struct.pack("<IIQII", 1, int(normalised), rows, dim, ld)
    head += struct.pack("<8Q", o_off, offs.nbytes, v_off, len(vocab), n_off, 4 * rows, x_off, padded.nbytes)
    body = offs.tobytes() + vocab + norms.astype("<f4").tobytes()
    with open(path, "wb") as f:
        f.write(head + body + bytes(x_off - len(head) - len(body)) + padded.tobytes())
    return str(path)


def brute_topk(vectors, q, k):
    x = np.asarray(vectors, dtype=np.float64)
    n = np.linalg.norm(x, axis=1)
    qn = np.linalg.norm(q)
    sims = (x @ q) / np.where(n > 0, n, 1) / (qn if qn > 0 else 1)
    return np.lexsort((np.arange(len(x)), -sims))[:k]


def test_query_rule():
    assert bp.query_rows(5, 20000).tolist() == [0, 4729, 9458, 14187, 18916]
    rows = bp.query_rows(8192, 2196016)
    assert rows.dtype == np.int64 and rows[8191] == (8191 * 104729) % 2196016
    assert bp.query_rows(3, 7).tolist() == [0, 104729 % 7, 209458 % 7]


def test_check_positions():
    assert bp.check_positions(1).tolist() == [0]
    assert bp.check_positions(16).tolist() == list(range(16))
    p = bp.check_positions(8192)
    assert len(p) == 32 and p[0] == 0 and p[-1] == 8191 and np.all(np.diff(p) > 0)


def test_parse_batches():
    assert bp.parse_batches("1, 16,8192", "x") == [1, 16, 8192]
    for bad in ("0", "1,,2", "a", "-4", "1.5"):
        with pytest.raises(SystemExit, match="--batches"):
            bp.parse_batches(bad, "x")


def test_oracle_matches_brute_force_with_ties_zero_rows_and_small_blocks():
    rng = np.random.default_rng(7)
    v = rng.standard_normal((101, 6)).astype(np.float32)
    v[10] = 0                       # a zero row: similarity 0
    v[40] = v[3]                    # an exact tie of row 3 (rows 3 and 40)
    v[77] = 2 * v[3]                # and a scaled copy: the same cosine
    queries = v[[3, 10, 50]]
    rows, sims = bp.oracle_topk(v, queries, 5, block=7)
    for j, q in enumerate(queries):
        assert rows[j].tolist() == brute_topk(v, q.astype(np.float64), 5).tolist()
    assert rows[0][:3].tolist() == [3, 40, 77] and np.allclose(sims[0][:3], 1.0)
    assert np.all(sims[1] == 0) and rows[1].tolist() == [0, 1, 2, 3, 4]   # zero query: all 0, by row


def test_oracle_on_a_strided_view_and_exact_fraction():
    rng = np.random.default_rng(1)
    padded = rng.standard_normal((50, 8)).astype(np.float32)
    view = padded[:, :5]                                   # like load_native's [:, :dim]
    rows, _ = bp.oracle_topk(view, view[[0, 1]], 3, block=16)
    assert rows[0].tolist() == brute_topk(np.ascontiguousarray(view), view[0].astype(np.float64), 3).tolist()
    assert bp.exact_fraction([[1, 2, 3], [4, 5, 6]], [[3, 2, 1], [4, 5, 7]]) == 0.5


def test_load_model_and_normalised_rows(tmp_path):
    v = np.array([[3, 4, 0], [0, 0, 0], [1, 0, 0]], dtype=np.float32)
    path = write_native(tmp_path / "m.dsv", ["a", "b", "c"], v)
    words, norms, vectors, normalised = bp.load_model(path, "peer_x")
    assert words == ["a", "b", "c"] and not normalised and vectors.shape == (3, 3)
    assert np.allclose(norms, [5, 0, 1])
    xn = bp.normalised_rows(vectors, norms, normalised)
    assert np.allclose(xn, [[0.6, 0.8, 0], [0, 0, 0], [1, 0, 0]])
    path2 = write_native(tmp_path / "n.dsv", ["a", "b", "c"], v, normalised=True)
    _, norms2, vectors2, normalised2 = bp.load_model(path2, "peer_x")
    assert normalised2 and np.allclose(norms2, [5, 0, 1])
    assert np.allclose(bp.normalised_rows(vectors2, norms2, normalised2), xn)   # not divided twice
    assert np.allclose(bp.normalised_queries(np.array([[0, 2, 0], [0, 0, 0]], np.float32)), [[0, 1, 0], [0, 0, 0]])


def test_load_model_errors_are_one_line(tmp_path):
    with pytest.raises(SystemExit, match=r"^peer_x: .*absent.dsv: No such file or directory$"):
        bp.load_model(str(tmp_path / "absent.dsv"), "peer_x")
    (tmp_path / "bad.dsv").write_bytes(b"not a model at all" * 10)
    with pytest.raises(SystemExit, match=r"^peer_x: .*bad.dsv: not a distancies native model$"):
        bp.load_model(str(tmp_path / "bad.dsv"), "peer_x")


def test_oracle_class_covers_every_batch():
    rng = np.random.default_rng(3)
    v = rng.standard_normal((300, 4)).astype(np.float32)
    o = bp.Oracle(v, [1, 16, 100], 4)
    for batch in (1, 16, 100):
        qrows = bp.query_rows(batch, 300)
        perfect = np.array([brute_topk(v, v[r].astype(np.float64), 4) for r in qrows])
        frac, checked = o.fraction(batch, perfect)
        assert frac == 1.0 and checked == min(32, batch)
        wrong = perfect.copy()
        wrong[bp.check_positions(batch)[0], -1] = (wrong[bp.check_positions(batch)[0], -1] + 1) % 300
        assert o.fraction(batch, wrong)[0] == pytest.approx(1 - 1 / checked)


def test_entries_are_google_benchmark_shaped():
    es = bp.entries("peer/torch_mm_topk_fp32", [2.0, 4.0, 3.0], 16, 1000, 0.75, 16, 8)
    run = parse({"context": {}, "benchmarks": es})
    b = run.benches["peer/torch_mm_topk_fp32/batch:16"]
    assert b.repetitions() == 3 and b.values("total_ms") == [2.0, 4.0, 3.0]
    assert b.center("total_ms") == 3.0 and b.spread("total_ms") == pytest.approx(1.0)
    assert b.center("queries_per_s") == pytest.approx(16 / 3.0 * 1e3)
    assert b.center("distances_per_ms") == pytest.approx(16 * 1000 / 3.0)
    assert b.center("exact_fraction") == 0.75 and b.center("chunk") == 8
    med = next(e for e in es if e.get("aggregate_name") == "median")
    assert med["samples_ms"] == [2.0, 4.0, 3.0] and med["real_time"] == 3.0 and med["time_unit"] == "ms"


def run_script(name, *args, env=None):
    return tool.run("scripts.peers." + name, *args, capture_output=True, text=True, env=env)


def test_peer_scripts_fail_with_one_line(tmp_path):
    model = write_native(tmp_path / "m.dsv", ["a", "b"], [[1, 0], [0, 1]])
    p = run_script("peer_torch_batch", model, "--batches", "1,0", "--out", tmp_path / "o.json")
    assert p.returncode == 1 and p.stderr.strip() == \
        "peer_torch_batch: --batches: '0' is not a positive integer (expected e.g. 1,16,128)"
    p = run_script("peer_faiss", model, "-k", "5000", "--out", tmp_path / "o.json")
    assert p.returncode == 1 and p.stderr.strip() == "peer_faiss: -k must be in 1..2048 (faiss GPU's limit)"
    if importlib.util.find_spec("faiss") is None:
        p = run_script("peer_faiss", model, "--out", tmp_path / "o.json")
        assert p.returncode == 1 and p.stderr.startswith("peer_faiss: cannot import faiss (")
        assert len(p.stderr.strip().splitlines()) == 1
    if importlib.util.find_spec("torch") is None:
        p = run_script("peer_torch_batch", model, "--out", tmp_path / "o.json")
        assert p.returncode == 1 and p.stderr.strip().startswith("peer_torch_batch: cannot import torch (")
    p = run_script("peer_faiss", model, "--faiss-dir", tmp_path / "none", "--out", tmp_path / "o.json")
    assert p.returncode == 1 and "--faiss-dir" in p.stderr and "not a folder" in p.stderr


def fatbin_entries(path):
    from scripts.peers import faiss_bundle
    data = open(path, "rb").read()
    off, size = faiss_bundle.elf_sections(data)[".nv_fatbin"]
    out, pos = [], off
    while pos + 16 <= off + size:
        magic, _, hsize, fsize = struct.unpack_from("<IHHQ", data, pos)
        if magic != 0xBA55ED50:
            pos += 8
            continue
        e = pos + hsize
        while e < pos + hsize + fsize:
            kind, _, ehs, psize = struct.unpack_from("<HHIQ", data, e)
            out.append((kind, struct.unpack_from("<I", data, e + 28)[0]))
            e += ehs + psize
        pos += hsize + fsize
    return out


@pytest.mark.skipif(not os.path.exists(os.path.join(ROOT, "build/harness/cli/distancies")),
                    reason="needs the built CLI (sm_90 SASS + compute_75 PTX) as a fatbin sample")
def test_prune_fatbins_keeps_only_sm90_sass(tmp_path):
    from scripts.peers import faiss_bundle
    exe = tmp_path / "distancies"
    exe.write_bytes(open(os.path.join(ROOT, "build/harness/cli/distancies"), "rb").read())
    before = fatbin_entries(exe)
    assert (2, 90) in before and (1, 75) in before            # SASS sm_90 and PTX compute_75
    kept, dropped, fatbins = faiss_bundle.prune_fatbins(str(exe))
    after = fatbin_entries(exe)
    assert fatbins >= 1 and dropped > 0 and set(after) == {(2, 90)}
    assert len(after) == sum(1 for e in before if e == (2, 90))
    assert os.path.getsize(exe) == len(open(os.path.join(ROOT, "build/harness/cli/distancies"), "rb").read())


def test_load_model_and_oracle_checks_k(tmp_path):
    import argparse
    v = np.array([[3, 4, 0], [0, 1, 0], [1, 0, 0]], dtype=np.float32)
    path = write_native(tmp_path / "m.dsv", ["a", "b", "c"], v)
    with pytest.raises(SystemExit, match=r"^peer_x: -k 4 is more than the model's 3 rows$"):
        bp.load_model_and_oracle(argparse.Namespace(model=path, k=4), [1], "peer_x")
    norms, vectors, normalised, oracle = bp.load_model_and_oracle(argparse.Namespace(model=path, k=2), [1], "peer_x")
    assert vectors.shape == (3, 3) and not normalised and np.allclose(norms, [5, 1, 1])
    assert isinstance(oracle, bp.Oracle)


def test_write_json_writes_the_document(tmp_path):
    # It once called itself (a name imported from atomic_write and then redefined) and wrote nothing.
    out = tmp_path / "peers.json"
    bp.write_json(out, {"device": "x", "n": 3}, [{"name": "peer/a/batch:1", "real_time": 1.5}], "test")
    doc = json.loads(out.read_text())
    assert doc["context"] == {"device": "x", "n": "3"}
    assert doc["benchmarks"][0]["real_time"] == 1.5
